"""The sql routes with FastAPI's TestClient and scripted models; mounted by create_app behind
the token check."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from casework.access import create_token, create_user, open_access
from casework.apikit import add_error_handler, current_caller
from casework.apps.sql.api import router
from casework.llm import call
from casework.runtime.context import Caller, Role
from casework.server import create_app


def _client(deps, config=None, role: Role = Role.USER) -> TestClient:
    """The router on a bare app (on ``config``'s models), the caller stubbed (the token check:
    the test below)."""
    app = FastAPI()
    app.state.settings = deps.settings
    models = config.models if config is not None else None
    app.include_router(router(deps.settings, lambda: deps, models=models), prefix="/sql")
    app.dependency_overrides[current_caller] = lambda: Caller(1, "analyst", role)
    add_error_handler(app)  # the server's error table
    return TestClient(app)


def test_the_platform_mounts_sql_behind_the_token(settings, security_db):
    from casework.apps.sql.deps import BUNDLED_SCHEMA, open_repository
    from casework.apps.sql.schemas import load_schema

    open_repository(settings).save(load_schema(BUNDLED_SCHEMA, name="security"), db_url=security_db)
    engine = open_access(settings)
    create_user(engine, "ana")
    token = create_token(engine, "ana")[1]
    client = TestClient(create_app(settings))
    query = {"query": "SELECT usrname FROM users"}
    assert client.post("/sql/validate", json=query).status_code == 401
    bad = client.post("/sql/validate", json=query, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    auth = {"Authorization": f"Bearer {token}"}
    checked = client.post("/sql/validate", json=query, headers=auth).json()
    assert checked["valid"] is False and checked["errors"][0]["suggestions"][0] == "users.username"
    # the schema is the admin's: it names the database (its folder hidden from a caller)
    denied = client.get("/sql/schema", headers=auth)
    assert denied.status_code == 403 and "needs the admin role" in denied.json()["error"]
    create_user(engine, "ada", "admin")
    admin = {"Authorization": f"Bearer {create_token(engine, 'ada')[1]}"}
    shown = client.get("/sql/schema", headers=admin).json()
    assert shown["name"] == "security"
    assert shown["db_url"] == f"sqlite:///***/{Path(security_db.split(':///')[1]).name}"
    refused = client.post(
        "/sql/ask", json={"question": "Drop the users table", "strategy": "rules"}, headers=auth
    ).json()
    assert refused["refused"] is True and refused["query"] is None and refused["confidence"] <= 0.1


def test_ask_returns_the_whole_response_with_rows(make_deps):
    deps, config, _, _ = make_deps(
        agent=[
            call(
                "submit_answer",
                query="SELECT COUNT(*) AS n FROM alerts",
                explanation="All alerts.",
                confidence=0.9,
            )
        ]
    )
    res = _client(deps, config).post(
        "/sql/ask",
        json={"question": "How many alerts are there?", "strategy": "keyword", "execute": True},
    )
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["query"] == "SELECT COUNT(*) AS n FROM alerts" and body["result"]["rows"] == [[60]]
    assert body["confidence"] == 0.9 and body["reasoning_steps"][-1]["kind"] == "final"


def test_bad_input_is_a_4xx_and_validation_answers(make_deps):
    deps, _, _, _ = make_deps()
    client = _client(deps)
    assert client.post("/sql/ask", json={"question": ""}).status_code == 422
    assert client.post("/sql/ask", json={"question": "x" * 100_000}).status_code == 422
    checked = client.post("/sql/validate", json={"query": "SELECT usrname FROM users"}).json()
    assert checked["valid"] is False and checked["errors"][0]["suggestions"][0] == "users.username"
    assert client.get("/sql/schema").status_code == 403  # the schema is the admin's
    admin = _client(deps, role=Role.ADMIN)
    assert admin.get("/sql/schema").json()["tables"]["alerts"]["category"] == "detection"
