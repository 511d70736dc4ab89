"""The server's per-request token check is fast (a read on the event loop for SQLite) and
still exact: a token revoked or a user disabled while the server runs stops working on the
next request, and ``last_used_at`` is written once per resolution, not per request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import select

from casework.access import (
    authenticate_token,
    create_token,
    create_user,
    disable_user,
    open_access,
    revoke_token,
)
from casework.access.service import LAST_USED_RESOLUTION, check_token
from casework.access.tables import TokenRow
from casework.config import Settings
from casework.runtime.context import Caller, Role
from casework.server import create_app


def _last_used(engine, token_id: int) -> datetime | None:
    with engine.connect() as conn:
        return conn.execute(select(TokenRow.last_used_at).where(TokenRow.id == token_id)).scalar()


def test_revoked_and_disabled_stop_working_on_the_next_request(tmp_path):
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    engine = open_access(settings)
    create_user(engine, "ana", "reviewer")
    create_user(engine, "bob")
    ana_info, ana = create_token(engine, "ana")
    _, bob = create_token(engine, "bob")
    client = TestClient(create_app(settings))

    def status(token: str) -> tuple[int, str]:
        res = client.get("/receipts/review", headers={"Authorization": f"Bearer {token}"})
        return res.status_code, res.json().get("error", "") if res.status_code != 200 else ""

    assert status(ana) == (200, "") and status(bob) == (200, "")
    revoke_token(engine, ana_info.prefix)
    assert status(ana) == (
        401,
        "The token was revoked; create a new one with `casework token create`.",
    )
    disable_user(engine, "bob")
    assert status(bob) == (401, "User 'bob' is disabled; an admin can add a new user.")


def test_check_token_reads_and_authenticate_writes_once_per_resolution(tmp_path):
    engine = open_access(Settings(home=tmp_path / "home", allow_network_models=False))
    user = create_user(engine, "ana", "reviewer")
    info, token = create_token(engine, "ana")
    now = datetime.now(UTC)

    first = check_token(engine, token, now=now)
    assert first.caller == Caller(user.id, "ana", Role.REVIEWER)
    assert (first.token_id, first.stale) == (info.id, True)
    assert _last_used(engine, info.id) is None  # a check alone writes nothing

    assert authenticate_token(engine, token, now=now) == first.caller
    written = _last_used(engine, info.id)
    assert written is not None
    assert check_token(engine, token, now=now + LAST_USED_RESOLUTION / 2).stale is False
    authenticate_token(engine, token, now=now + LAST_USED_RESOLUTION / 2)
    assert _last_used(engine, info.id) == written
    later = now + LAST_USED_RESOLUTION + timedelta(seconds=1)
    assert check_token(engine, token, now=later).stale is True
