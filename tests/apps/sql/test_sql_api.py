"""The sql routes with FastAPI's TestClient and scripted models."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from casework.apps.sql.api import router
from casework.llm import call


def _client(deps) -> TestClient:
    app = FastAPI()
    app.include_router(router(lambda: deps), prefix="/sql")
    return TestClient(app)


def test_ask_returns_the_whole_response_with_rows(make_deps):
    deps, _, _ = make_deps(
        agent=[
            call(
                "submit_answer",
                query="SELECT COUNT(*) AS n FROM alerts",
                explanation="All alerts.",
                confidence=0.9,
            )
        ]
    )
    res = _client(deps).post(
        "/sql/ask",
        json={"question": "How many alerts are there?", "strategy": "keyword", "execute": True},
    )
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["query"] == "SELECT COUNT(*) AS n FROM alerts" and body["result"]["rows"] == [[60]]
    assert body["confidence"] == 0.9 and body["reasoning_steps"][-1]["kind"] == "final"


def test_bad_input_is_a_4xx_and_validation_answers(make_deps):
    deps, _, _ = make_deps()
    client = _client(deps)
    assert client.post("/sql/ask", json={"question": ""}).status_code == 422
    assert client.post("/sql/ask", json={"question": "x" * 100_000}).status_code == 422
    checked = client.post("/sql/validate", json={"query": "SELECT usrname FROM users"}).json()
    assert checked["valid"] is False and checked["errors"][0]["suggestions"][0] == "users.username"
    assert client.get("/sql/schema").json()["tables"]["alerts"]["category"] == "detection"
