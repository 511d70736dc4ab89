"""API routes: scoped to the caller, 404 for other users' rows, SSE that survives a dropped client."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from docs_fixtures import ALICE, BOB, INVOICE_TEXT, no_models, text_read
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from casework.apikit import add_error_handler, current_caller
from casework.apps.documents.api import router
from casework.apps.documents.deps import DocumentsDeps
from casework.llm import RoleModels, ScriptedChatModel, call, say
from casework.runtime.context import Caller, Role

DATA = Path(__file__).resolve().parents[3] / "src/casework/apps/documents/data/eval/files"


def _client(deps: DocumentsDeps, model: ScriptedChatModel | None = None) -> TestClient:
    """The router on a bare app (its runs on ``model``; without one, a run that asks for a
    model fails the test); the caller comes from a test header (tokens: tests/access)."""
    app = FastAPI()
    app.state.settings = deps.settings
    models = RoleModels.given(model) if model is not None else no_models()
    app.include_router(router(deps.settings, lambda: deps, models=models), prefix="/documents")

    def caller(request: Request) -> Caller:
        uid = int(request.headers.get("x-user", ALICE))
        return Caller(uid, {ALICE: "ana", BOB: "bob"}[uid], Role.USER)

    app.dependency_overrides[current_caller] = caller
    add_error_handler(app)  # the server's error table
    return TestClient(app)


@contextmanager
def _served(app: FastAPI) -> Iterator[str]:
    """The app on a loopback port in a thread, so a client can really drop its connection."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(100):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _sse(lines) -> list[tuple[int, dict]]:
    events, current = [], None
    for line in lines:
        if line.startswith("id:"):
            current = int(line[3:].strip())
        elif line.startswith("data:"):
            events.append((current, json.loads(line[5:].strip())))
            if events[-1][1].get("complete"):
                break
    return events


def test_upload_list_show_and_other_users_get_404(deps: DocumentsDeps) -> None:
    client = _client(deps)
    res = client.post(
        "/documents/documents",
        files={"file": ("inv.pdf", (DATA / "invoice-01.pdf").read_bytes(), "application/pdf")},
    )
    assert res.status_code == 201, res.text
    doc = res.json()
    assert doc["filename"] == "inv.pdf" and doc["engine"] == "pypdf"
    assert [d["id"] for d in client.get("/documents/documents").json()] == [doc["id"]]
    assert client.get("/documents/documents", headers={"x-user": str(BOB)}).json() == []
    mine_missing = client.get("/documents/documents/999")
    theirs = client.get(f"/documents/documents/{doc['id']}", headers={"x-user": str(BOB)})
    assert mine_missing.status_code == theirs.status_code == 404
    assert theirs.json()["error"] == mine_missing.json()["error"].replace("999", str(doc["id"]))
    bad = client.post("/documents/documents", files={"file": ("x.pdf", b"", "application/pdf")})
    assert (
        bad.status_code == 422
        and bad.json()["error"] == "x.pdf is empty (0 bytes); add a PDF, PNG or JPEG file."
    )


def test_rules_extraction_and_the_spec_route_stream(deps: DocumentsDeps) -> None:
    doc = deps.repo.add_document(
        ALICE, filename="inv.pdf", data=b"%PDF", read=text_read(INVOICE_TEXT)
    )
    client = _client(deps)
    with client.stream(
        "POST", "/documents/api/agent/extract", json={"document_id": doc.id, "strategy": "rules"}
    ) as res:
        assert res.status_code == 200
        events = _sse(res.iter_lines())
    assert events[-1][1]["complete"] is True and events[-1][1]["extraction_id"] >= 1
    ext = client.get(f"/documents/extractions/{events[-1][1]['extraction_id']}").json()
    assert ext["status"] == "completed" and ext["fields"]["total"] == 45.1
    assert (
        client.get(f"/documents/extractions/{ext['id']}", headers={"x-user": str(BOB)}).status_code
        == 404
    )
    res = client.post(
        "/documents/api/agent/extract", json={"document_id": doc.id}, headers={"x-user": str(BOB)}
    )
    assert res.status_code == 404


def test_a_dropped_sse_client_reattaches_without_losing_an_event(deps: DocumentsDeps) -> None:
    doc = deps.repo.add_document(
        ALICE, filename="inv.pdf", data=b"%PDF", read=text_read(INVOICE_TEXT)
    )
    go = threading.Event()

    def wait_then_extract(messages):
        assert go.wait(10), "the test never released the run"
        return call("extract_fields", fields={"total": 45.1}, confidences={"total": 0.9})

    model = ScriptedChatModel(
        steps=[
            call("get_document_text"),
            wait_then_extract,
            say("Saved the total."),
            call("complete_extraction"),
        ]
    )
    client = _client(deps, model)
    with _served(client.app) as base, httpx.Client(base_url=base, timeout=10) as http:
        body = {"document_id": doc.id, "strategy": "agent"}
        started = http.post("/documents/extractions", json=body).json()
        run_id = started["run_id"]
        with http.stream("GET", f"/documents/runs/{run_id}/events") as res:  # a real socket
            first = []
            for line in res.iter_lines():
                if line.startswith("data:"):
                    first.append(json.loads(line[5:]))
                    break
        # the client is gone; the run goes on with nobody listening
        assert first == [{"tool": "get_document_text", "input": {}}]
        assert http.get(f"/documents/runs/{run_id}").json()["status"] == "running"
        go.set()
        for _ in range(100):
            if http.get(f"/documents/runs/{run_id}").json()["status"] == "done":
                break
            time.sleep(0.1)
        assert http.get(f"/documents/runs/{run_id}").json()["status"] == "done"
        with http.stream(
            "GET", f"/documents/runs/{run_id}/events", headers={"Last-Event-ID": "1"}
        ) as res:
            rest = _sse(res.iter_lines())
        with http.stream("GET", f"/documents/runs/{run_id}/events") as res:
            everything = _sse(res.iter_lines())
    assert [seq for seq, _ in rest] == list(range(2, len(everything) + 1))
    assert [(1, first[0]), *rest] == everything
    assert [e for _, e in everything] == [
        {"tool": "get_document_text", "input": {}},
        {
            "tool": "extract_fields",
            "input": {"fields": {"total": 45.1}, "confidences": {"total": 0.9}},
        },
        {"text": "Saved the total."},
        {"tool": "complete_extraction", "input": {}},
        {
            "complete": True,
            "extraction_id": started["extraction_id"],
            "cost": 0.0,
            "status": "completed",
        },
    ]
    assert (
        client.get(f"/documents/runs/{run_id}/events", headers={"x-user": str(BOB)}).status_code
        == 404
    )
    assert client.get(f"/documents/runs/{run_id}", headers={"x-user": str(BOB)}).status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        (
            "post",
            "/documents/extractions/{ext}/correct",
            {"extraction_id": 0, "instruction": "total is 1"},
        ),
        (
            "post",
            "/documents/api/agent/correct",
            {"extraction_id": "{ext}", "instruction": "total is 1"},
        ),
        ("get", "/documents/extractions/{ext}", None),
        ("get", "/documents/documents/{doc}", None),
        ("post", "/documents/extractions", {"document_id": "{doc}", "strategy": "rules"}),
    ],
)
def test_bob_naming_alices_ids_gets_404_and_changes_nothing(
    deps: DocumentsDeps, method: str, path: str, body: dict | None
) -> None:
    doc = deps.repo.add_document(
        ALICE, filename="inv.pdf", data=b"%PDF", read=text_read(INVOICE_TEXT)
    )
    ext = deps.repo.create_extraction(ALICE, doc.id)
    deps.repo.set_fields(ALICE, ext.id, {"total": 2}, {"total": 0.5})
    deps.repo.complete(ALICE, ext.id)
    client = _client(deps)
    url = path.format(ext=ext.id, doc=doc.id)
    payload = (
        json.loads(json.dumps(body).replace('"{ext}"', str(ext.id)).replace('"{doc}"', str(doc.id)))
        if body
        else None
    )
    res = (
        getattr(client, method)(url, json=payload, headers={"x-user": str(BOB)})
        if payload
        else getattr(client, method)(url, headers={"x-user": str(BOB)})
    )
    assert res.status_code == 404, res.text
    after = deps.repo.get_extraction(ALICE, ext.id)
    assert after.fields == {"total": 2} and after.status == "completed"
    assert len(deps.repo.extractions_of(ALICE, doc.id)) == 1


def test_correct_route_and_stack_build_export(deps: DocumentsDeps) -> None:
    doc = deps.repo.add_document(
        ALICE, filename="inv.pdf", data=b"%PDF", read=text_read(INVOICE_TEXT)
    )
    ext = deps.repo.create_extraction(ALICE, doc.id)
    deps.repo.set_fields(ALICE, ext.id, {"total": 54.1}, {"total": 0.6})
    deps.repo.complete(ALICE, ext.id)
    model = ScriptedChatModel(
        steps=[
            call("update_field", path="total", value=45.1, confidence=1.0),
            call("complete_extraction"),
            call("define_columns", columns=[{"name": "total", "type": "number"}]),
            call("extract_row", doc_id=doc.id, values={"total": 45.1}, confidences={"total": 0.9}),
            call("complete_table"),
        ]
    )
    client = _client(deps, model)
    with client.stream(
        "POST",
        "/documents/api/agent/correct",
        json={"extraction_id": ext.id, "instruction": "the total is 45.10"},
    ) as res:
        events = _sse(res.iter_lines())
    assert [e for _, e in events] == [
        {"tool": "update_field", "input": {"path": "total", "value": 45.1, "confidence": 1.0}},
        {"tool": "complete_extraction", "input": {}},
        {"complete": True, "extraction_id": ext.id, "cost": 0.0, "status": "completed"},
    ]
    assert client.get(f"/documents/extractions/{ext.id}").json()["fields"] == {"total": 45.1}
    stack = client.post("/documents/stacks", json={"name": "March"}).json()
    client.post(f"/documents/stacks/{stack['id']}/documents", json={"document_ids": [doc.id]})
    assert client.get(f"/documents/stacks/{stack['id']}/export.csv").status_code == 422
    run = client.post(f"/documents/stacks/{stack['id']}/build").json()
    with client.stream("GET", f"/documents/runs/{run['run_id']}/events") as res:
        built = _sse(res.iter_lines())
    assert built[-1][1] == {
        "complete": True,
        "stack_id": stack["id"],
        "status": "completed",
        "rows": 1,
        "documents": 1,
        "ended_by": "submit",
        "cost": 0.0,
    }
    csv_text = client.get(f"/documents/stacks/{stack['id']}/export.csv").text
    assert csv_text.splitlines() == ["document_id,filename,total", f"{doc.id},inv.pdf,45.1"]
    assert (
        client.get(f"/documents/stacks/{stack['id']}", headers={"x-user": str(BOB)}).status_code
        == 404
    )
    assert (
        client.post(
            f"/documents/stacks/{stack['id']}/build", headers={"x-user": str(BOB)}
        ).status_code
        == 404
    )
