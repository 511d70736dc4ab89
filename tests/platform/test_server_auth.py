"""Every mounted route checks the caller: walk create_app's routes, so a new app is covered too."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from fastapi import APIRouter, Depends, FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import update

from casework import registry
from casework.access import create_token, create_user, disable_user, open_access, revoke_token
from casework.access.tables import TokenRow
from casework.apikit import add_error_handler, allow, current_caller, get_settings_dep
from casework.config import ServerSettings, Settings
from casework.errors import ConfigError
from casework.registry import AppSpec
from casework.runtime.context import Caller
from casework.server import create_app
from casework.server.auth import check_serve_allowed
from casework.stores.sql import session_scope

OPEN = {"/health", "/docs", "/docs/oauth2-redirect", "/openapi.json", "/redoc"}


def _probe_app(settings: Settings) -> APIRouter:
    """A stand-in for the next app: it reads settings and the caller through dependencies."""
    api = APIRouter()

    @api.get("/whoami", dependencies=[allow("probe.whoami")])
    def whoami(
        caller: Caller = Depends(current_caller), s: Settings = Depends(get_settings_dep)
    ) -> dict[str, str]:
        return {"name": caller.name, "role": caller.role.value, "home": str(s.home)}

    @api.post("/things/{thing_id}/approve", dependencies=[allow("probe.approve", "reviewer")])
    def approve(thing_id: int) -> dict[str, int]:
        return {"approved": thing_id}

    return api


@pytest.fixture
def world(tmp_path, monkeypatch):
    """create_app on a fresh store with a probe app registered next to the built-in ones."""
    # The walks below send hundreds of bad tokens from one address on purpose: the per-address
    # limit on them (tests/reliability/test_attack_trust.py) would answer 429 instead of 401.
    limits = ServerSettings(token_failures=1_000_000)
    settings = Settings(home=tmp_path / "home", allow_network_models=False, server=limits)
    apps = dict(registry.all_apps())
    apps["probe"] = AppSpec(name="probe", description="test app", router=_probe_app)
    monkeypatch.setattr(registry, "_cache", apps)
    engine = open_access(settings)
    create_user(engine, "ana", "reviewer")
    create_user(engine, "bob")
    create_user(engine, "eve")
    tokens = {name: create_token(engine, name)[1] for name in ("ana", "bob", "eve")}
    revoked_info, tokens["revoked"] = create_token(engine, "ana")
    revoke_token(engine, str(revoked_info.id))
    expired_info, tokens["expired"] = create_token(engine, "ana", expires_days=1)
    with session_scope(engine) as session:
        session.execute(
            update(TokenRow)
            .where(TokenRow.id == expired_info.id)
            .values(expires_at=datetime.now(UTC) - timedelta(minutes=1))
        )
    disable_user(engine, "eve")
    return settings, create_app(settings), tokens


def _protected_routes(app: FastAPI) -> list[tuple[str, str]]:
    """(method, concrete path) of every API route, from the OpenAPI schema: FastAPI mounts
    included routers lazily, so the schema is the public list of what is served."""
    routes = []
    for path, operations in app.openapi()["paths"].items():
        if path in OPEN:
            continue
        for method, operation in operations.items():
            assert operation.get("security") == [{"HTTPBearer": []}], (method, path)
            routes.append((method.upper(), re.sub(r"\{[^}]+\}", "1", path)))
    return routes


def test_every_mounted_route_needs_a_good_token(world):
    _, app, tokens = world
    routes = _protected_routes(app)
    assert ("GET", "/probe/whoami") in routes and ("POST", "/receipts/validate") in routes
    assert {p for _, p in routes} >= {
        "/receipts/receipts",
        "/receipts/review",
        "/receipts/review/1/accept",
        "/receipts/review/1/reject",
        "/receipts/words/1/1/1/labels",
    }
    client = TestClient(app)
    refusals = {
        "none": ({}, "This route needs an API token"),
        "malformed": ({"Authorization": "Token abc"}, "must read 'Bearer TOKEN'"),
        "wrong": ({"Authorization": "Bearer cw_" + "0" * 43}, "The token is not valid"),
        "revoked": ({"Authorization": f"Bearer {tokens['revoked']}"}, "was revoked"),
        "expired": ({"Authorization": f"Bearer {tokens['expired']}"}, "The token expired on"),
        "disabled": ({"Authorization": f"Bearer {tokens['eve']}"}, "User 'eve' is disabled"),
    }
    for method, path in routes:
        for case, (headers, message) in refusals.items():
            res = client.request(method, path, headers=headers)
            assert res.status_code == 401, (method, path, case, res.text)
            assert message in res.json()["error"], (method, path, case)
            assert res.json()["kind"] == "AuthError"
            assert res.headers["www-authenticate"] == "Bearer"
        in_query = client.request(
            method,
            f"{path}?access_token={tokens['ana']}",
            headers={"Authorization": f"Bearer {tokens['ana']}"},
        )
        assert (
            in_query.status_code == 401
            and "send it in the Authorization header" in (in_query.json()["error"])
        )
        good = client.request(method, path, headers={"Authorization": f"Bearer {tokens['ana']}"})
        assert good.status_code != 401, (method, path, good.text)


def test_open_routes_need_no_token(world):
    _, app, _ = world
    client = TestClient(app)
    for path in ("/health", "/docs", "/openapi.json", "/redoc"):
        assert client.get(path).status_code == 200, path
    assert "probe" in client.get("/health").json()["apps"]


def test_the_caller_and_settings_reach_the_handler(world):
    _, app, tokens = world
    client = TestClient(app)
    res = client.get("/probe/whoami", headers={"Authorization": f"Bearer {tokens['bob']}"})
    # the server's own folder leaves redacted (casework.redact), even from an app's answer
    assert res.json() == {"name": "bob", "role": "user", "home": "<home>"}


def test_reviewer_actions_refuse_plain_users_with_403(world):
    _, app, tokens = world
    client = TestClient(app)
    bob = {"Authorization": f"Bearer {tokens['bob']}"}
    ana = {"Authorization": f"Bearer {tokens['ana']}"}
    for path in (
        "/probe/things/7/approve",
        "/receipts/review/7/accept",
        "/receipts/review/7/reject",
    ):
        res = client.post(path, headers=bob)
        assert res.status_code == 403, path
        assert res.json() == {
            "error": "This action needs the reviewer role; bob is a user.",
            "kind": "PermissionDenied",
        }
    assert client.post("/probe/things/7/approve", headers=ana).json() == {"approved": 7}
    # The reviewer gets past the role check to the app's own answer (no such label).
    missing = client.post("/receipts/review/7/accept", headers=ana)
    assert missing.status_code == 404 and missing.json()["error"] == "No label with id 7."


def test_a_router_mounted_without_the_platform_check_fails_closed(tmp_path):
    app = FastAPI()
    app.state.settings = Settings(home=tmp_path, allow_network_models=False)
    add_error_handler(app)
    app.include_router(_probe_app(app.state.settings))
    res = TestClient(app).get("/whoami")
    assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer"


def test_serve_refuses_a_public_interface_without_users(tmp_path):
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    check_serve_allowed("127.0.0.1", settings)
    check_serve_allowed("localhost", settings)
    check_serve_allowed("::1", settings)
    with pytest.raises(ConfigError, match=r"add one with `casework user add NAME --role admin`"):
        check_serve_allowed("0.0.0.0", settings)
    create_user(open_access(settings), "ana", "admin")
    check_serve_allowed("0.0.0.0", settings)
    empty = Settings(home=tmp_path / "other", allow_network_models=False)
    with pytest.raises(ConfigError, match=r"Refusing to serve on 192\.168\.1\.5 with no users"):
        check_serve_allowed("192.168.1.5", empty)
