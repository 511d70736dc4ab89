"""The access branch on a real PostgreSQL server: migrate, add users, authenticate, revoke,
and web sessions ended by a password change and by disabling."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect

from casework.access import (
    AuthError,
    authenticate_token,
    check_session,
    create_token,
    create_user,
    disable_user,
    has_users,
    list_sessions,
    open_access,
    revoke_token,
    set_password,
    start_session,
)
from casework.config import Settings
from casework.errors import InputError
from casework.runtime.context import Caller, Role
from casework.server import create_app
from casework.stores.sql import current_heads

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_url():
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def test_access_on_postgres(pg_url: str, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", database_url=pg_url, allow_network_models=False)
    engine = open_access(settings)
    assert "access_0002" in current_heads(engine)
    columns = {c["name"] for c in inspect(engine).get_columns("api_tokens")}
    assert columns == {
        "id",
        "user_id",
        "token_hash",
        "prefix",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    }
    assert not has_users(engine)
    ana = create_user(engine, "ana", "reviewer", password="long enough")
    with pytest.raises(InputError, match="already exists"):
        create_user(engine, "ana")
    info, token = create_token(engine, "ana", expires_days=3)
    assert authenticate_token(engine, token) == Caller(ana.id, "ana", Role.REVIEWER)

    client = TestClient(create_app(settings))
    assert client.get("/receipts/review").status_code == 401
    ok = client.get("/receipts/review", headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200 and ok.json() == []

    revoke_token(engine, info.prefix)
    with pytest.raises(AuthError, match="revoked"):
        authenticate_token(engine, token)

    caller = Caller(ana.id, "ana", Role.REVIEWER)
    _, session = start_session(engine, caller, max_seconds=3600, address="2001:db8::7")
    assert check_session(engine, session, idle_seconds=1800).caller == caller
    assert [s.address for s in list_sessions(engine, "ana")] == ["2001:db8::7"]
    set_password(engine, "ana", "another long one")
    with pytest.raises(AuthError, match="The session has ended"):
        check_session(engine, session, idle_seconds=1800)
    _, session = start_session(engine, caller, max_seconds=3600)
    disable_user(engine, "ana")
    with pytest.raises(AuthError, match="The session has ended"):
        check_session(engine, session, idle_seconds=1800)
    assert not has_users(engine)
