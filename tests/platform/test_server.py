import json

from fastapi import APIRouter
from fastapi.testclient import TestClient

from casework.errors import NotFoundError
from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime.runconfig import RunConfig
from casework.server import create_app, sse_response
from casework.smoke import OrderRef, build_smoke_agent


def test_health_and_error_mapping_and_sse():
    app = create_app()
    router = APIRouter()

    @router.get("/missing")
    def missing():
        raise NotFoundError("No receipt 9.")

    @router.get("/run")
    def run():
        model = ScriptedChatModel(
            steps=[
                call("get_order_status"),
                call("submit_decision", verdict="VALID", confidence=90, reasoning="r"),
            ]
        )
        return sse_response(
            build_smoke_agent(RunConfig(models=RoleModels.given(model))).iter_events(
                "check", context=OrderRef(), trace=False
            )
        )

    app.include_router(router, prefix="/t")
    client = TestClient(app)
    assert client.get("/health").json()["status"] == "ok"
    r = client.get("/t/missing")
    assert r.status_code == 404 and r.json()["error"] == "No receipt 9."
    body = client.get("/t/run").text
    events = [
        line.removeprefix("event: ").strip()
        for line in body.splitlines()
        if line.startswith("event:")
    ]
    assert events == ["tool", "tool_result", "tool", "tool_result", "complete"]
    data = [
        json.loads(line.removeprefix("data: "))
        for line in body.splitlines()
        if line.startswith("data:")
    ]
    assert data[-1]["result"]["verdict"] == "VALID" and data[-1]["usage"]["model_calls"] == 2
