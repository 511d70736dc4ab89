"""Which errors are worth another attempt, and how long to wait before it."""

from __future__ import annotations

import asyncio
import random

from casework.errors import CaseworkError

__all__ = ["backoff_seconds", "is_transient", "one_line"]

_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
_TRANSIENT_NAMES = (
    "RateLimit",
    "Timeout",
    "TimedOut",
    "Connection",
    "Connect",
    "Overloaded",
    "ServiceUnavailable",
    "InternalServer",
    "APIError",
    "RemoteProtocol",
    "ReadError",
)


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: timeouts, connection errors and 408 / 429 / 5xx-like provider errors.
    Never a ``CaseworkError`` (bad input, config, drift) nor a plain bug."""
    if isinstance(exc, CaseworkError):
        return False
    if isinstance(exc, TimeoutError | asyncio.TimeoutError | ConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        return status in _TRANSIENT_STATUS or status >= 500
    names = [cls.__name__ for cls in type(exc).__mro__]
    return any(token in name for name in names for token in _TRANSIENT_NAMES)


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def backoff_seconds(attempt: int, base: float, exc: BaseException) -> float:
    """The provider's Retry-After when it sent one, else exponential backoff with jitter."""
    hinted = _retry_after(exc)
    if hinted is not None:
        return min(hinted, 60.0)
    return min(30.0, base * 2.0 ** (attempt - 1)) * (0.5 + random.random() / 2)


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:500] if text else type(exc).__name__
