"""The one token check: a FastAPI security dependency the server puts on every app router.

``authenticate`` reads ``Authorization: Bearer TOKEN``, turns it into a ``Caller`` (or an
``AuthError``: a 401 with one sentence and ``WWW-Authenticate: Bearer`` from the one error table,
``casework.apikit``) and leaves it on ``request.state`` for
``casework.apikit.current_caller`` and the routes' permissions (``casework.apikit.allow``). Tokens in the query string
are refused even when a good header comes with them: URLs end up in logs and browser history.
A client address that sent ``server.token_failures`` bad tokens within
``server.login_lockout_seconds`` gets a 429 for that long, before its token is looked at.
"""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

from fastapi import Request, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Engine

from casework.access.service import TOKEN_PREFIX, AuthError, check_token, has_users, touch_token
from casework.access.service import open_access as open_access_engine
from casework.apikit import TooManyAttempts
from casework.config import Settings
from casework.errors import ConfigError
from casework.runtime.context import Caller
from casework.web.throttle import FailureCounter, wait_words

__all__ = ["QUERY_TOKEN_NAMES", "authenticate", "check_serve_allowed", "is_loopback"]

QUERY_TOKEN_NAMES = frozenset({"access_token", "token", "api_key", "apikey", "key", "bearer"})
"""Query parameters that would carry a token; any value starting ``cw_`` counts too."""

# auto_error=False: we word the 401 ourselves (and FastAPI's default is a 403 on old versions).
_bearer = HTTPBearer(
    auto_error=False,
    description=f"An API token from `casework token create USER` (starts with {TOKEN_PREFIX}).",
)


async def authenticate(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Security(_bearer),
) -> Caller:
    """The caller behind the request's bearer token, or a 401 saying what to send."""
    for name, value in request.query_params.multi_items():
        if name.lower() in QUERY_TOKEN_NAMES or value.startswith(TOKEN_PREFIX):
            raise AuthError(
                "Tokens are not accepted in the URL; send it in the Authorization header "
                "as 'Bearer TOKEN'."
            )
    header = request.headers.get("authorization")
    if header is None:
        raise AuthError(
            "This route needs an API token: send 'Authorization: Bearer TOKEN' "
            "(create one with `casework token create USER`)."
        )
    if credentials is None or not credentials.credentials.strip():
        raise AuthError("The Authorization header must read 'Bearer TOKEN'.")
    failures = _token_failures(request)
    address = request.client.host if request.client else "unknown"
    if wait := failures.locked_for(address):
        raise TooManyAttempts(_too_many(wait), wait)
    engine = await _access_engine(request)
    token, now = credentials.credentials.strip(), datetime.now(UTC)
    # SQLite answers this indexed read from a local file in microseconds, less than the hop to
    # a worker thread costs (measured: the hop alone was ~60% of a cached GET's CPU); a
    # networked database is asked from a worker thread, not to stall the event loop. A token
    # that does not pass raises AuthError: a 401, or the 429 once it locks the address.
    try:
        if engine.dialect.name == "sqlite":
            check = check_token(engine, token, now=now)
        else:
            check = await run_in_threadpool(check_token, engine, token, now=now)
    except AuthError:
        if wait := failures.failed(address):
            raise TooManyAttempts(_too_many(wait), wait) from None
        raise
    if check.stale:  # a write, which may wait for SQLite's write lock: never on the loop
        await run_in_threadpool(touch_token, engine, check.token_id, now)
    request.state.caller = check.caller
    return check.caller


def _too_many(wait: float) -> str:
    return f"Too many bad API tokens from this address; try again in {wait_words(wait)}."


def _token_failures(request: Request) -> FailureCounter:
    """Failed tokens per client address, one counter per app (made on first use)."""
    counter: FailureCounter | None = getattr(request.app.state, "token_failures", None)
    if counter is None:
        limits = request.app.state.settings.server
        counter = FailureCounter(limits.token_failures, limits.login_lockout_seconds)
        request.app.state.token_failures = counter
    return counter


async def _access_engine(request: Request) -> Engine:
    """The access tables' engine, opened (and migrated) once per app on a worker thread."""
    engine: Engine | None = getattr(request.app.state, "access_engine", None)
    if engine is None:
        settings: Settings = request.app.state.settings
        engine = await run_in_threadpool(open_access_engine, settings)
        request.app.state.access_engine = engine
    return engine


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_serve_allowed(host: str, settings: Settings) -> None:
    """Refuse to serve on a reachable interface when nobody could hold a token."""
    if is_loopback(host) or has_users(open_access_engine(settings)):
        return
    raise ConfigError(
        f"Refusing to serve on {host} with no users, since every route would answer 401: "
        "add one with `casework user add NAME --role admin`, then `casework token create NAME`."
    )
