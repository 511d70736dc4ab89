"""Web sessions kept on the server, so the server can end them.

Signing in creates a row; the browser's cookie carries the session's random id (32 bytes,
``secrets.token_urlsafe``) and the row keeps only its SHA-256 digest, like API tokens (see
``casework.access.service``). Every request looks the session up, so signing out, changing
the password, disabling the user or ``casework user sessions NAME --revoke`` ends it at once.
A session also ends when it is idle longer than ``server.session_idle_seconds`` or older than
``server.session_max_seconds``. The CSRF token of the session's forms lives in the row.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, bindparam, delete, select, update

from casework.access.service import AuthError, _find_user, _iso, hash_token
from casework.access.tables import SessionRow, UserRow
from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller, Role
from casework.stores.sql import as_utc, session_scope

__all__ = [
    "ActiveSession",
    "SessionInfo",
    "check_session",
    "end_session",
    "list_sessions",
    "revoke_sessions",
    "start_session",
]

LAST_SEEN_RESOLUTION = timedelta(minutes=1)
"""``last_seen_at`` is written at most this often per session (a quarter of the idle timeout
when that is shorter), not on every request."""
ADDRESS_CHARS = 64


@dataclass(frozen=True)
class SessionInfo:
    """A session as ``casework user sessions`` shows it: never the id the browser holds."""

    id: int
    user: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    address: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user": self.user,
            "created_at": _iso(self.created_at),
            "last_seen_at": _iso(self.last_seen_at),
            "expires_at": _iso(self.expires_at),
            "address": self.address,
        }


@dataclass(frozen=True)
class ActiveSession:
    """A session that stands: who it is for and the CSRF token its forms must carry."""

    id: int
    caller: Caller
    csrf: str


def _info(row: SessionRow, user: str) -> SessionInfo:
    return SessionInfo(
        id=row.id,
        user=user,
        created_at=as_utc(row.created_at) or row.created_at,
        last_seen_at=as_utc(row.last_seen_at) or row.last_seen_at,
        expires_at=as_utc(row.expires_at) or row.expires_at,
        address=row.address,
    )


def start_session(
    engine: Engine,
    caller: Caller,
    *,
    max_seconds: float,
    address: str | None = None,
    now: datetime | None = None,
) -> tuple[ActiveSession, str]:
    """A new session for ``caller`` (who just proved their password) and the secret id the
    browser keeps; the user's ended sessions are swept away on the way."""
    now = now or datetime.now(UTC)
    secret = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(24)
    with session_scope(engine) as session:
        session.execute(
            delete(SessionRow).where(
                SessionRow.user_id == caller.user_id, SessionRow.expires_at <= now
            )
        )
        row = SessionRow(
            user_id=caller.user_id,
            id_hash=hash_token(secret),
            csrf=csrf,
            created_at=now,
            last_seen_at=now,
            expires_at=now + timedelta(seconds=max_seconds),
            address=(address or None) and address[:ADDRESS_CHARS],
        )
        session.add(row)
        session.flush()
        return ActiveSession(id=row.id, caller=caller, csrf=csrf), secret


_LOOKUP = (
    select(
        SessionRow.id,
        SessionRow.csrf,
        SessionRow.last_seen_at,
        SessionRow.expires_at,
        UserRow.id.label("user_id"),
        UserRow.name,
        UserRow.role,
        UserRow.disabled,
    )
    .join(UserRow, UserRow.id == SessionRow.user_id)
    .where(SessionRow.id_hash == bindparam("id_hash"))
)


def check_session(
    engine: Engine, secret: str, *, idle_seconds: float, now: datetime | None = None
) -> ActiveSession:
    """The session behind a browser's id, its ``last_seen_at`` brought up to date; AuthError
    (one sentence) when there is none, it ended, or its user is disabled. An ended session's
    row is deleted here."""
    now = now or datetime.now(UTC)
    id_hash = hash_token(secret)
    with engine.connect() as conn:
        row = conn.execute(_LOOKUP, {"id_hash": id_hash}).one_or_none()
    if row is None:
        raise AuthError("The session has ended; sign in again.")
    last_seen = as_utc(row.last_seen_at) or now
    expires = as_utc(row.expires_at) or now
    idle = timedelta(seconds=idle_seconds)
    if row.disabled or expires <= now or now - last_seen >= idle:
        with engine.begin() as conn:
            conn.execute(delete(SessionRow).where(SessionRow.id == row.id))
        raise AuthError("The session has ended; sign in again.")
    if now - last_seen >= min(LAST_SEEN_RESOLUTION, idle / 4):
        with engine.begin() as conn:
            conn.execute(update(SessionRow).where(SessionRow.id == row.id).values(last_seen_at=now))
    caller = Caller(user_id=row.user_id, name=row.name, role=Role(row.role))
    return ActiveSession(id=row.id, caller=caller, csrf=row.csrf)


def end_session(engine: Engine, secret: str) -> bool:
    """End the session behind a browser's id (sign-out); False when there was none."""
    with engine.begin() as conn:
        done = conn.execute(delete(SessionRow).where(SessionRow.id_hash == hash_token(secret)))
    return bool(done.rowcount)


def list_sessions(engine: Engine, user: str, *, now: datetime | None = None) -> list[SessionInfo]:
    """``user``'s sessions that have not reached their absolute end, oldest first (an idle one
    is listed until a request finds it idle: the idle timeout is a setting read then)."""
    now = now or datetime.now(UTC)
    with session_scope(engine) as session:
        owner = _find_user(session, user)
        rows = session.scalars(
            select(SessionRow)
            .where(SessionRow.user_id == owner.id, SessionRow.expires_at > now)
            .order_by(SessionRow.id)
        )
        return [_info(r, owner.name) for r in rows]


def revoke_sessions(engine: Engine, user: str, which: str = "all") -> int:
    """End ``user``'s sessions: ``all`` of them or the one with id ``which``; how many ended."""
    with session_scope(engine) as session:
        owner = _find_user(session, user)
        query = delete(SessionRow).where(SessionRow.user_id == owner.id)
        if which != "all":
            if not which.isascii() or not which.isdigit() or len(which) > 18:
                raise InputError(
                    f"--revoke takes 'all' or a session id from `casework user sessions "
                    f"{user}`, not {which!r}."
                )
            query = query.where(SessionRow.id == int(which))
        # A DELETE's result is a CursorResult, which has the count; the ORM types it plainly.
        ended = session.execute(query).rowcount  # type: ignore[attr-defined]
        if which != "all" and not ended:
            raise NotFoundError(
                f"{user} has no session {which}; list them with `casework user sessions {user}`."
            )
        return int(ended)
