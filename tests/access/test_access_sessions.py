"""Server-side web sessions: only a digest stored, idle and absolute ends, and every way a
session is ended (sign-out, password change, disabling, revoking from the command line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from casework.access import (
    AuthError,
    check_session,
    create_user,
    disable_user,
    end_session,
    list_sessions,
    open_access,
    revoke_sessions,
    set_password,
    start_session,
)
from casework.access.service import hash_token
from casework.access.tables import SessionRow
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller, Role
from casework.stores.sql import session_scope

T0 = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
IDLE = 1800.0
MAX = 12 * 3600.0


@pytest.fixture
def engine(tmp_path):
    engine = open_access(Settings(home=tmp_path / "home", allow_network_models=False))
    create_user(engine, "ana", "reviewer", password="correct-horse")
    create_user(engine, "bob", "user", password="correct-horse")
    return engine


ANA = Caller(1, "ana", Role.REVIEWER)
BOB = Caller(2, "bob", Role.USER)


def _start(engine, caller=ANA, at=T0, address="192.0.2.7"):
    return start_session(engine, caller, max_seconds=MAX, address=address, now=at)


def test_only_the_digest_of_the_id_is_stored(engine) -> None:
    active, secret = _start(engine)
    assert len(secret) == 43 and active.caller == ANA and len(active.csrf) >= 32
    with session_scope(engine) as s:
        row = s.scalars(select(SessionRow)).one()
        stored = [str(v) for v in vars(row).values()]
    assert row.id_hash == hash_token(secret) and not any(secret in v for v in stored)
    found = check_session(engine, secret, idle_seconds=IDLE, now=T0 + timedelta(minutes=5))
    assert (found.id, found.caller, found.csrf) == (active.id, ANA, active.csrf)
    with pytest.raises(AuthError, match=r"The session has ended; sign in again\."):
        check_session(engine, secret + "x", idle_seconds=IDLE, now=T0)


def test_a_session_ends_when_idle_or_too_old(engine) -> None:
    _, secret = _start(engine)
    # Busy every 20 minutes: it lives on, each use pushing the idle end further.
    for minutes in range(20, 12 * 60, 20):
        check_session(engine, secret, idle_seconds=IDLE, now=T0 + timedelta(minutes=minutes))
    with pytest.raises(AuthError):  # 12 hours after sign-in, however busy
        check_session(engine, secret, idle_seconds=IDLE, now=T0 + timedelta(hours=12))
    _, idle = _start(engine)
    check_session(engine, idle, idle_seconds=IDLE, now=T0 + timedelta(minutes=29))
    with pytest.raises(AuthError):  # 30 minutes after its last use
        check_session(engine, idle, idle_seconds=IDLE, now=T0 + timedelta(minutes=59))
    with session_scope(engine) as s:  # an ended session's row goes
        assert s.scalars(select(SessionRow)).all() == []


def test_sign_out_password_change_and_disabling_end_sessions_at_once(engine) -> None:
    later = T0 + timedelta(minutes=1)
    _, signed_out = _start(engine)
    _, other_browser = _start(engine)
    assert end_session(engine, signed_out) is True and end_session(engine, signed_out) is False
    with pytest.raises(AuthError):
        check_session(engine, signed_out, idle_seconds=IDLE, now=later)
    check_session(engine, other_browser, idle_seconds=IDLE, now=later)  # only that one ended
    _, bobs = _start(engine, BOB)
    set_password(engine, "ana", "a-new-password")
    with pytest.raises(AuthError):
        check_session(engine, other_browser, idle_seconds=IDLE, now=later)
    check_session(engine, bobs, idle_seconds=IDLE, now=later)  # bob's password did not change
    disable_user(engine, "bob")
    with pytest.raises(AuthError):
        check_session(engine, bobs, idle_seconds=IDLE, now=later)


def test_sessions_are_listed_without_secrets_and_revoked_by_id_or_all(engine) -> None:
    first, _ = _start(engine, address="192.0.2.7")
    second, kept = _start(engine, at=T0 + timedelta(minutes=3), address=None)
    _start(engine, at=T0 - timedelta(hours=13))  # past its absolute end: not listed
    listed = list_sessions(engine, "ana", now=T0 + timedelta(minutes=4))
    assert [(s.id, s.address) for s in listed] == [(first.id, "192.0.2.7"), (second.id, None)]
    assert listed[0].to_dict() == {
        "id": first.id,
        "user": "ana",
        "created_at": "2026-11-27T09:00:00+00:00",
        "last_seen_at": "2026-11-27T09:00:00+00:00",
        "expires_at": "2026-11-27T21:00:00+00:00",
        "address": "192.0.2.7",
    }
    assert revoke_sessions(engine, "ana", str(first.id)) == 1
    with pytest.raises(NotFoundError, match=f"ana has no session {first.id}"):
        revoke_sessions(engine, "ana", str(first.id))
    _, bobs = _start(engine, BOB)
    with pytest.raises(NotFoundError):  # one user's id cannot end another's session
        revoke_sessions(engine, "ana", str(list_sessions(engine, "bob", now=T0)[0].id))
    with pytest.raises(InputError, match="--revoke takes 'all' or a session id"):
        revoke_sessions(engine, "ana", "²")
    assert revoke_sessions(engine, "ana", "all") == 2  # the listed one and the stale one
    with pytest.raises(AuthError):
        check_session(engine, kept, idle_seconds=IDLE, now=T0 + timedelta(minutes=5))
    check_session(engine, bobs, idle_seconds=IDLE, now=T0 + timedelta(minutes=1))
    with pytest.raises(NotFoundError, match="No user 'nobody'"):
        list_sessions(engine, "nobody")


def _cli(home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "casework.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env={**os.environ, "CASEWORK_HOME": str(home)},
    )


def test_user_sessions_and_password_from_the_command_line(tmp_path) -> None:
    home = tmp_path / "home"
    engine = open_access(Settings(home=home, allow_network_models=False))
    create_user(engine, "ana", "reviewer", password="correct-horse")
    now = datetime.now(UTC)
    first, _ = start_session(engine, ANA, max_seconds=MAX, address="192.0.2.7", now=now)
    _, second = start_session(engine, ANA, max_seconds=MAX, address="198.51.100.4", now=now)

    listed = _cli(home, "user", "sessions", "ana", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [r["address"] for r in rows] == ["192.0.2.7", "198.51.100.4"]
    assert second not in listed.stdout
    table = _cli(home, "user", "sessions", "ana")
    assert "192.0.2.7" in table.stdout and "last seen" in table.stdout

    one = _cli(home, "user", "sessions", "ana", "--revoke", str(first.id))
    assert one.returncode == 0 and "ended 1 web session of ana" in one.stdout
    gone = _cli(home, "user", "sessions", "ana", "--revoke", str(first.id))
    assert gone.returncode == 2 and "ana has no session" in gone.stderr
    assert "Traceback" not in gone.stderr

    changed = _cli(home, "user", "password", "ana", "--password-stdin", stdin="brand-new-pw\n")
    assert changed.returncode == 0 and "their web sessions ended" in changed.stdout
    with pytest.raises(AuthError):
        check_session(engine, second, idle_seconds=IDLE)
    assert _cli(home, "user", "sessions", "ana").stdout.strip() == "ana has no web sessions"
    short = _cli(home, "user", "password", "ana", "--password-stdin", stdin="short\n")
    assert short.returncode == 2 and "at least 8 characters" in short.stderr


def test_a_revoked_sessions_id_is_never_given_to_a_new_one(engine) -> None:
    first, _ = _start(engine)
    revoke_sessions(engine, "ana", "all")
    second, _ = _start(engine)
    assert second.id > first.id
