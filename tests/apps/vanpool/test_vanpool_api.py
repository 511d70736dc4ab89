"""The HTTP routes over one store: audit, case, reply, approvals (404 / 422 for user errors)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient
from vanpool_helpers import first, specialist_responder

from casework.apikit import add_error_handler, current_caller
from casework.apps.vanpool.api import router
from casework.llm import RoleModels
from casework.runtime.context import Caller, Role


def _client(deps, role: Role = Role.REVIEWER, models: RoleModels | None = None) -> TestClient:
    """The router on a bare app (on ``models``, else the settings'), the caller stubbed (the
    token check is tested in tests/platform)."""
    app = FastAPI()
    app.state.settings = deps.settings
    app.include_router(router(deps.settings, lambda: deps, models=models), prefix="/vanpool")
    app.dependency_overrides[current_caller] = lambda: Caller(7, "rita", role)
    add_error_handler(app)  # the server's error table
    return TestClient(app)


def test_routes(deps, truth, sink) -> None:
    client = _client(deps)
    vp = first(truth, "shift_mismatch")["vanpool_id"]
    assert len(client.get("/vanpool/vanpools").json()) == 38
    res = client.post(f"/vanpool/vanpools/{vp}/audit", json={"strategy": "rules"})
    assert res.status_code == 200
    body = res.json()
    assert (body["verdict"], body["failed_checks"]) == ("pending_reply", ["shift"])
    case_id = body["case_id"]
    assert client.get(f"/vanpool/cases/{case_id}").json()["meta"]["reason"] == "shift_mismatch"
    res = client.post(
        f"/vanpool/cases/{case_id}/replies", json={"text": "I dispute this, it's unfair."}
    )
    assert res.json()["verdict"] == "hitl_review"
    [pending] = client.get("/vanpool/approvals").json()
    assert pending["action"] == "send_email_for_review"
    as_user = _client(deps, Role.USER)
    denied = as_user.post(f"/vanpool/approvals/{case_id}", json={"decision": "approve"})
    assert denied.status_code == 403 and len(sink.messages) == 1
    res = client.post(f"/vanpool/approvals/{case_id}", json={"decision": "approve"})
    assert res.json()["status"] == "pending_reply"
    log = client.get(f"/vanpool/cases/{case_id}").json()["audit_log"]
    assert [a["actor"] for a in log if a["action"] == "draft_approved"] == ["rita"]
    assert len(sink.messages) == 2
    again = client.post(f"/vanpool/approvals/{case_id}", json={"decision": "approve"})
    assert again.status_code == 404 and "no pending approval" in again.json()["error"]
    assert client.post("/vanpool/vanpools/VP-999/audit").status_code == 404
    assert client.post("/vanpool/vanpools/VP-1/audit").status_code == 422
    assert client.get("/vanpool/cases/CASE-XYZ").status_code == 422
    tick = client.post("/vanpool/tick", json={"now": "2026-12-01T10:00:00+00:00"}).json()
    assert [r["case_id"] for r in tick["reaudited"]] == [case_id]
    # Every step of the case (audit, reply, approval, tick) names the caller who caused it.
    log = client.get(f"/vanpool/cases/{case_id}").json()["audit_log"]
    assert len(log) > 8 and {a["caller"] for a in log} == {"rita"}


def test_audit_events_stream_as_sse(deps, truth, sink) -> None:
    import json

    from langchain_core.messages import AIMessage

    from casework.llm import ScriptedChatModel, call

    clean = first(truth, "clean")["vanpool_id"]
    both = AIMessage(
        content="",
        tool_calls=[
            *call("run_location_specialist").tool_calls,
            *call("run_shift_specialist").tool_calls,
        ],
    )
    cm = ScriptedChatModel(
        steps=[both, call("submit_decision", verdict="verified", confidence=90, reasoning="ok")]
    )
    scripted = RoleModels.given(
        lambda role: (
            cm if role == "orchestrator" else ScriptedChatModel(responder=specialist_responder)
        )
    )
    client = _client(deps, models=scripted)
    with client.stream("GET", f"/vanpool/vanpools/{clean}/audit/events") as res:
        text = "".join(res.iter_text())
    events = [
        line.removeprefix("event: ").strip()
        for line in text.splitlines()
        if line.startswith("event:")
    ]
    assert events[-1] == "complete" and "tool" in events
    data = [
        json.loads(line.removeprefix("data: "))
        for line in text.splitlines()
        if line.startswith("data:")
    ]
    assert data[-1]["result"]["verdict"] == "verified"
    assert client.get("/vanpool/vanpools/VP-999/audit/events").status_code == 404
