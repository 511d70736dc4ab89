"""The one mapping from casework errors to HTTP answers: a status and ``{"error", "kind"}``.

The server's exception handler and its request guards (which answer before any route runs)
both call ``error_response``, so a refused request reads like any other error.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse

from casework.access.service import AuthError
from casework.errors import CaseworkError, InputError, NotFoundError
from casework.runtime.context import PermissionDenied

__all__ = ["RequestTooLarge", "error_response", "error_status"]


class RequestTooLarge(InputError):
    """A request body over the server's size limit (``server.max_body_bytes``)."""

    def __init__(self, limit: int, setting: str = "CASEWORK_SERVER__MAX_BODY_BYTES") -> None:
        super().__init__(
            f"The request body is larger than this server accepts ({_size(limit)}); "
            f"send less, or raise {setting}."
        )
        self.limit = limit


def _size(n: int) -> str:
    mb = n / (1024 * 1024)
    return f"{mb:g} MB" if mb >= 1 else f"{n:,} bytes"


def error_status(exc: CaseworkError) -> int:
    if isinstance(exc, AuthError):  # e.g. a sign-in route checking a password
        return 401
    if isinstance(exc, RequestTooLarge):
        return 413
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, PermissionDenied):
        return 403
    if isinstance(exc, InputError):
        return 422
    return 500


def error_response(exc: CaseworkError) -> JSONResponse:
    status = error_status(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(
        {"error": str(exc), "kind": type(exc).__name__}, status_code=status, headers=headers
    )
