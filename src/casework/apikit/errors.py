"""The one error -> HTTP table: a route raises a ``CaseworkError`` and its class says the
status; request validation errors answer without the input; anything else is a one-sentence
500 (the traceback goes to the log)."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from casework.access.service import AuthError
from casework.errors import (
    CaseworkError,
    ConfigError,
    InputError,
    ModelError,
    NotFoundError,
    StoreUnavailable,
)
from casework.runtime.context import PermissionDenied

logger = logging.getLogger(__name__)


class RequestTooLarge(InputError):
    """A request body over the server's size limit (``server.max_body_bytes``)."""

    def __init__(self, limit: int, setting: str = "CASEWORK_SERVER__MAX_BODY_BYTES") -> None:
        super().__init__(
            f"The request body is larger than this server accepts ({_size(limit)}); "
            f"send less, or raise {setting}."
        )
        self.limit = limit


class TooManyAttempts(CaseworkError):
    """Too many failed attempts from one client (bad API tokens): a 429 with Retry-After."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _size(n: int) -> str:
    mb = n / (1024 * 1024)
    return f"{mb:g} MB" if mb >= 1 else f"{n:,} bytes"


_STATUS: list[tuple[type[CaseworkError], int]] = [
    (AuthError, 401),  # e.g. a sign-in route checking a password
    (RequestTooLarge, 413),
    (TooManyAttempts, 429),
    (NotFoundError, 404),  # another tenant's row answers the same: it does not exist for them
    (PermissionDenied, 403),
    (InputError, 422),
    # A ConfigError names the setting or the request header to change (a model the caller
    # named that cannot be built, "no vision model is configured; send a vision model"): the
    # request cannot be served as sent against this set-up. It is not a bug (500), and a 503
    # would invite retrying the same request, which fails the same way: 400, and the
    # sentence says what to change.
    (ConfigError, 400),
    (ModelError, 502),  # the model behind the route failed or answered unusably
    (StoreUnavailable, 503),  # the database file is damaged or unwritable: the operator acts
]
"""The one error -> HTTP table, most specific class first; any other error is a 500."""


def error_status(exc: CaseworkError) -> int:
    """The HTTP status of an error a route raised (see ``_STATUS``)."""
    return next((status for kind, status in _STATUS if isinstance(exc, kind)), 500)


def error_body(exc: CaseworkError) -> dict[str, Any]:
    """``{"error": <one sentence>, "kind": <the error's class>}``."""
    return {"error": str(exc), "kind": type(exc).__name__}


def error_response(exc: CaseworkError) -> JSONResponse:
    """The answer to a ``CaseworkError``: its status and :func:`error_body`."""
    status = error_status(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(exc, TooManyAttempts):
        headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))}
    return JSONResponse(error_body(exc), status_code=status, headers=headers)


VALIDATION_KEYS = ("type", "loc", "msg")
"""What a 422 keeps of each validation error: FastAPI's default also sends ``input`` (the
whole body for a body of the wrong kind: megabytes echoed back) and ``ctx``."""


def validation_response(exc: RequestValidationError) -> JSONResponse:
    """FastAPI's 422 (``{"detail": [...]}``) without the caller's input in it."""
    detail = [
        {key: error[key] for key in VALIDATION_KEYS if key in error} for error in exc.errors()
    ]
    return JSONResponse({"detail": detail}, status_code=422)


ErrorPage = Callable[[Request, int, str], Response]
"""Renders an error as a page: the web UI registers one on ``app.state.error_page``."""


def add_error_handler(app: FastAPI, *, crash_headers: dict[str, str] | None = None) -> None:
    """Answer every ``CaseworkError`` a route raises from the one table: JSON
    (:func:`error_response`), or a page with the same status and sentence when the route
    renders pages (a route whose class sets ``renders_pages``: the web UI's); a request
    that fails validation with :func:`validation_response`; an id past 64 bits as the 422 it
    is; and anything else as a one-sentence 500 (the traceback goes to the log).
    ``crash_headers``: what the 500 carries itself (it comes from the outermost layer, past
    the middleware that adds the server's security headers)."""

    async def handle(request: Request, exc: Exception) -> Response:
        error = cast(CaseworkError, exc)  # registered for CaseworkError only
        page: ErrorPage | None = getattr(request.app.state, "error_page", None)
        if page is not None and getattr(request.scope.get("route"), "renders_pages", False):
            return page(request, error_status(error), str(error))
        return error_response(error)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        return validation_response(cast(RequestValidationError, exc))

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A bug, not the caller's fault: say so in one sentence; the traceback goes to the log.
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(
            {
                "error": f"Internal error ({type(exc).__name__}); see the server log.",
                "kind": "InternalError",
            },
            status_code=500,
            headers=crash_headers,
        )

    async def too_big_for_sqlite(request: Request, exc: Exception) -> Response:
        # An id the caller sent past 64 bits: SQLite refuses to bind it, and no row has it.
        if "SQLite INTEGER" not in str(exc):
            return await unexpected(request, exc)
        return await handle(
            request,
            InputError(
                f"A number in the request is larger than any id stored here ({2**63 - 1:,} at "
                "most); check the id."
            ),
        )

    app.add_exception_handler(CaseworkError, handle)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(OverflowError, too_big_for_sqlite)
    app.add_exception_handler(Exception, unexpected)
