"""Users, passwords and API tokens: the one access service the server, the CLI and the web UI share.

Tokens are ``cw_`` plus 32 random bytes (``secrets.token_urlsafe``), shown once and stored as a
SHA-256 digest. A plain fast hash is right here: a token has 256 bits of entropy, so nobody can
guess it from its digest however fast the hash is, and looking it up by digest costs one
indexed query per request. Passwords are chosen by people and guessable, so they get a slow,
salted Argon2 hash (pwdlib).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pwdlib import PasswordHash
from sqlalchemy import Engine, bindparam, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from casework.access.tables import SessionRow, TokenRow, UserRow
from casework.config import Settings, get_settings
from casework.errors import CaseworkError, InputError, NotFoundError
from casework.runtime.context import Caller, Role
from casework.stores.sql import as_utc, get_engine, migrate, session_scope

__all__ = [
    "TOKEN_PREFIX",
    "AuthError",
    "TokenCheck",
    "TokenInfo",
    "User",
    "authenticate_token",
    "check_token",
    "create_token",
    "create_user",
    "disable_user",
    "get_user",
    "has_users",
    "hash_token",
    "list_tokens",
    "list_users",
    "open_access",
    "revoke_token",
    "set_password",
    "touch_token",
    "verify_password",
]

TOKEN_PREFIX = "cw_"
PREFIX_SHOWN = 10
"""Characters of a token kept in clear for display and revocation: ``cw_`` plus 7."""
MIN_PASSWORD = 8
LAST_USED_RESOLUTION = timedelta(minutes=1)
"""``last_used_at`` is written at most this often per token, not on every request."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,79}$")
_passwords = PasswordHash.recommended()
# Verified against when the user does not exist, so a wrong name costs as long as a wrong password.
_DUMMY_HASH = _passwords.hash(secrets.token_urlsafe(16))


class AuthError(CaseworkError):
    """The caller could not be authenticated (HTTP 401): the message says what to send."""

    exit_code = 2


@dataclass(frozen=True)
class User:
    id: int
    name: str
    role: Role
    disabled: bool
    has_password: bool
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"role": str(self.role), "created_at": _iso(self.created_at)}


@dataclass(frozen=True)
class TokenInfo:
    """A token as it can be shown again: never the secret, only its prefix."""

    id: int
    user: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None

    def status(self, now: datetime | None = None) -> str:
        now = now or datetime.now(UTC)
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user": self.user,
            "prefix": self.prefix,
            "status": self.status(),
            "created_at": _iso(self.created_at),
            "last_used_at": _iso(self.last_used_at),
            "expires_at": _iso(self.expires_at),
            "revoked_at": _iso(self.revoked_at),
        }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


_migrated: set[str] = set()
_migrate_lock = threading.Lock()


def open_access(settings: Settings | None = None) -> Engine:
    """The engine holding the access tables, migrated once per URL per process."""
    url = (settings or get_settings()).db_url
    engine = get_engine(url)
    with _migrate_lock:
        if url not in _migrated:
            migrate(engine)
            _migrated.add(url)
    return engine


def _user(row: UserRow) -> User:
    return User(
        id=row.id,
        name=row.name,
        role=Role(row.role),
        disabled=row.disabled,
        has_password=row.password_hash is not None,
        created_at=as_utc(row.created_at) or row.created_at,
    )


def _token(row: TokenRow, user: str) -> TokenInfo:
    return TokenInfo(
        id=row.id,
        user=user,
        prefix=row.prefix,
        created_at=as_utc(row.created_at) or row.created_at,
        last_used_at=as_utc(row.last_used_at),
        expires_at=as_utc(row.expires_at),
        revoked_at=as_utc(row.revoked_at),
    )


def _role(role: Role | str) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise InputError(
            f"Unknown role {role!r}; use one of: {', '.join(r.value for r in Role)}."
        ) from None


def _check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise InputError(f"The password is too short; use at least {MIN_PASSWORD} characters.")
    return password


def _find_user(session: Session, name: str) -> UserRow:
    row = session.scalars(select(UserRow).where(UserRow.name == name)).one_or_none()
    if row is None:
        raise NotFoundError(f"No user {name!r}; list them with `casework user list`.")
    return row


def create_user(
    engine: Engine, name: str, role: Role | str = Role.USER, *, password: str | None = None
) -> User:
    if not _NAME.match(name):
        raise InputError(
            f"User name {name!r} is not allowed; use 1-80 letters, digits, '.', '_', '@' or '-'."
        )
    row = UserRow(
        name=name,
        role=_role(role).value,
        password_hash=_passwords.hash(_check_password(password)) if password is not None else None,
        disabled=False,
        created_at=datetime.now(UTC),
    )
    try:
        with session_scope(engine) as session:
            session.add(row)
            session.flush()
            return _user(row)
    except IntegrityError:
        raise InputError(f"A user named {name!r} already exists.") from None


def get_user(engine: Engine, name: str) -> User:
    with session_scope(engine) as session:
        return _user(_find_user(session, name))


def list_users(engine: Engine) -> list[User]:
    with session_scope(engine) as session:
        return [_user(r) for r in session.scalars(select(UserRow).order_by(UserRow.id))]


def has_users(engine: Engine) -> bool:
    """True when at least one enabled user exists (someone could hold a token)."""
    with session_scope(engine) as session:
        count = session.scalar(select(func.count()).select_from(UserRow).where(~UserRow.disabled))
        return bool(count)


def disable_user(engine: Engine, name: str) -> User:
    """Disable a user: every token of theirs stops working at once (rows are kept for the
    audit) and their web sessions end."""
    with session_scope(engine) as session:
        row = _find_user(session, name)
        row.disabled = True
        session.execute(delete(SessionRow).where(SessionRow.user_id == row.id))
        return _user(row)


def set_password(engine: Engine, name: str, password: str) -> None:
    """Set a user's password; every web session of theirs ends (in the same transaction), so
    whoever held one must sign in with the new password."""
    with session_scope(engine) as session:
        row = _find_user(session, name)
        row.password_hash = _passwords.hash(_check_password(password))
        session.execute(delete(SessionRow).where(SessionRow.user_id == row.id))


def verify_password(engine: Engine, name: str, password: str) -> Caller:
    """The caller for a name and password (web sign-in); AuthError on any mismatch, said alike."""
    with session_scope(engine) as session:
        row = session.scalars(select(UserRow).where(UserRow.name == name)).one_or_none()
        stored = row.password_hash if row is not None else None
        ok, updated = _passwords.verify_and_update(password, stored or _DUMMY_HASH)
        if row is None or stored is None or not ok or row.disabled:
            raise AuthError("The user name or password is wrong, or the user is disabled.")
        if updated is not None:  # hashed with older parameters: upgrade while we have it
            row.password_hash = updated
        return Caller(user_id=row.id, name=row.name, role=Role(row.role))


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(
    engine: Engine, user: str, *, expires_days: int | None = None
) -> tuple[TokenInfo, str]:
    """A new token for ``user``: its info and the secret, which is never stored nor shown again."""
    if expires_days is not None and expires_days < 1:
        raise InputError("--expires-days must be at least 1 (leave it out for no expiry).")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    with session_scope(engine) as session:
        owner = _find_user(session, user)
        if owner.disabled:
            raise InputError(f"User {user!r} is disabled; a token for them would not work.")
        row = TokenRow(
            user_id=owner.id,
            token_hash=hash_token(secret),
            prefix=secret[:PREFIX_SHOWN],
            created_at=now,
            expires_at=now + timedelta(days=expires_days) if expires_days else None,
        )
        session.add(row)
        session.flush()
        return _token(row, owner.name), secret


def list_tokens(engine: Engine, user: str) -> list[TokenInfo]:
    with session_scope(engine) as session:
        owner = _find_user(session, user)
        rows = session.scalars(
            select(TokenRow).where(TokenRow.user_id == owner.id).order_by(TokenRow.id)
        )
        return [_token(r, owner.name) for r in rows]


def revoke_token(engine: Engine, ref: str) -> TokenInfo:
    """Revoke by numeric id or by the displayed prefix (which must match one token)."""
    with session_scope(engine) as session:
        query = select(TokenRow, UserRow.name).join(UserRow, UserRow.id == TokenRow.user_id)
        if ref.isdigit():
            found = session.execute(query.where(TokenRow.id == int(ref))).all()
        elif ref.startswith(TOKEN_PREFIX) and len(ref) > PREFIX_SHOWN:
            # A whole token pasted in: find it by its digest rather than by prefix.
            found = session.execute(query.where(TokenRow.token_hash == hash_token(ref))).all()
        else:
            found = session.execute(query.where(TokenRow.prefix == ref)).all()
        if not found:
            raise NotFoundError(
                f"No token {ref!r}; list them with `casework token list USER` "
                "and pass the id or prefix."
            )
        if len(found) > 1:
            raise InputError(f"Prefix {ref!r} matches {len(found)} tokens; revoke by id instead.")
        row, name = found[0]
        if row.revoked_at is None:
            row.revoked_at = datetime.now(UTC)
        return _token(row, name)


@dataclass(frozen=True)
class TokenCheck:
    """What ``check_token`` found: the caller, and whether ``last_used_at`` is due a write."""

    caller: Caller
    token_id: int
    stale: bool


# Columns, not ORM rows: the server checks a token on every request, and loading two mapped
# objects (in a session of their own) cost several times the indexed read itself.
_TOKEN_LOOKUP = (
    select(
        TokenRow.id,
        TokenRow.revoked_at,
        TokenRow.expires_at,
        TokenRow.last_used_at,
        UserRow.id.label("user_id"),
        UserRow.name,
        UserRow.role,
        UserRow.disabled,
    )
    .join(UserRow, UserRow.id == TokenRow.user_id)
    .where(TokenRow.token_hash == bindparam("token_hash"))
)


def check_token(engine: Engine, token: str, *, now: datetime | None = None) -> TokenCheck:
    """The caller a bearer token stands for, read without writing anything; AuthError (one
    sentence) when it does not stand. ``authenticate_token`` also records the use."""
    now = now or datetime.now(UTC)
    if not token.startswith(TOKEN_PREFIX) or len(token) <= PREFIX_SHOWN:
        raise AuthError(
            f"That is not a casework token (they start with {TOKEN_PREFIX!r}); "
            "create one with `casework token create USER`."
        )
    with engine.connect() as conn:
        row = conn.execute(_TOKEN_LOOKUP, {"token_hash": hash_token(token)}).one_or_none()
    if row is None:
        raise AuthError("The token is not valid; create one with `casework token create USER`.")
    if row.revoked_at is not None:
        raise AuthError("The token was revoked; create a new one with `casework token create`.")
    expires = as_utc(row.expires_at)
    if expires is not None and expires <= now:
        raise AuthError(
            f"The token expired on {expires:%Y-%m-%d}; "
            "create a new one with `casework token create`."
        )
    if row.disabled:
        raise AuthError(f"User {row.name!r} is disabled; an admin can add a new user.")
    last = as_utc(row.last_used_at)
    return TokenCheck(
        caller=Caller(user_id=row.user_id, name=row.name, role=Role(row.role)),
        token_id=row.id,
        stale=last is None or now - last >= LAST_USED_RESOLUTION,
    )


def touch_token(engine: Engine, token_id: int, now: datetime) -> None:
    """Record a use of the token (``last_used_at``)."""
    with engine.begin() as conn:
        conn.execute(update(TokenRow).where(TokenRow.id == token_id).values(last_used_at=now))


def authenticate_token(engine: Engine, token: str, *, now: datetime | None = None) -> Caller:
    """The caller a bearer token stands for; AuthError (one sentence) when it does not stand.
    Its ``last_used_at`` is written at most once per ``LAST_USED_RESOLUTION``."""
    now = now or datetime.now(UTC)
    check = check_token(engine, token, now=now)
    if check.stale:
        touch_token(engine, check.token_id, now)
    return check.caller
