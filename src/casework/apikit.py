"""What every app's ``api.py`` shares, below the apps and below ``casework.server``: server-sent
events (and the one ``Last-Event-ID`` parse), the one error -> HTTP table (request validation
errors included, which never echo the body back), the one way to name an uploaded file, and
the per-database deps cache.

An app's router imports this module, never ``casework.server`` (the server mounts the
routers, so a router importing it would import its own caller). Routes raise
``CaseworkError`` subclasses and the exception handler answers them from :func:`error_status`
with ``{"error": <one sentence>, "kind": <the error's class>}``: the server installs it with
:func:`add_error_handler`, and so does a test that mounts one router on a bare app::

    cache = DepsCache(build_deps, deps_factory)

    @r.get("/things/{thing_id}")
    def thing(thing_id: str, d: Deps = Depends(cache.dependency)) -> dict[str, Any]:
        return service.thing(d, thing_id)  # an unknown id raises NotFoundError: a 404
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar, cast

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sse_starlette.sse import EventSourceResponse

from casework.access.service import AuthError
from casework.config import Settings
from casework.errors import CaseworkError, ConfigError, InputError, ModelError, NotFoundError
from casework.runtime.context import PermissionDenied, get_settings_dep
from casework.runtime.events import Event, to_json

__all__ = [
    "DepsCache",
    "RequestTooLarge",
    "TooManyAttempts",
    "add_error_handler",
    "error_body",
    "error_response",
    "error_status",
    "last_event_id",
    "safe_upload_name",
    "sse_response",
]

logger = logging.getLogger(__name__)

D = TypeVar("D")


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


def add_error_handler(app: FastAPI) -> None:
    """Answer every ``CaseworkError`` a route raises with :func:`error_response`, and a request
    that fails validation with :func:`validation_response`."""

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        return error_response(cast(CaseworkError, exc))  # registered for CaseworkError only

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        return validation_response(cast(RequestValidationError, exc))

    app.add_exception_handler(CaseworkError, handle)
    app.add_exception_handler(RequestValidationError, invalid)


MAX_EVENT_ID_DIGITS = 18
"""Event ids are row sequence numbers: 18 digits always fit a 64-bit integer."""


def last_event_id(value: str | None) -> int:
    """The event id in a ``Last-Event-ID`` header (a reconnecting client's last one seen): its
    number when it is plain ASCII digits a database can hold, else 0 (start over). Junk such
    as ``²`` (a digit to ``str.isdigit``, not to ``int``) or 5,000 digits is ignored."""
    value = (value or "").strip()
    if not value.isascii() or not value.isdigit() or len(value) > MAX_EVENT_ID_DIGITS:
        return 0
    return int(value)


MAX_NAME_BYTES = 255
"""A file name's limit on common file systems (ext4, APFS, NTFS), in UTF-8 bytes."""
MAX_SUFFIX_BYTES = 16


def safe_upload_name(filename: str | None) -> str:
    """The name to store an uploaded file under: its base name (any folders a client put in
    it dropped, ``/`` or ``\\``), without control characters, cut to 255 bytes keeping the
    extension. InputError (422) when nothing nameable is left (empty, ``.``, ``..``)."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    if base in ("", ".", ".."):
        raise InputError(
            "The uploaded file's name is empty, '.', '..' or ends in a folder separator; "
            "send the file under its own name, such as 'receipt.pdf'."
        )
    data = base.encode()
    if len(data) <= MAX_NAME_BYTES:
        return base
    stem, dot, suffix = base.rpartition(".")
    keeps_suffix = bool(stem) and len(suffix.encode()) < MAX_SUFFIX_BYTES
    tail = (dot + suffix).encode() if keeps_suffix else b""
    head = (stem.encode() if keeps_suffix else data)[: MAX_NAME_BYTES - len(tail)]
    # A cut through a multi-byte character drops that character's first bytes too.
    return head.decode(errors="ignore") + tail.decode()


def sse_response(events: Iterator[Event] | AsyncIterator[Event]) -> EventSourceResponse:
    """Stream runtime events as SSE (`event: <type>`, `data: <json>`); a blocking iterator
    is advanced on a worker thread, and a failure mid-stream is a last ``error`` event."""

    async def stream() -> AsyncIterator[Event]:
        if hasattr(events, "__aiter__"):
            async for event in events:
                yield event
        else:
            iterator = iter(events)
            sentinel = object()
            while True:
                event = await asyncio.to_thread(next, iterator, sentinel)
                if event is sentinel:
                    break
                yield event

    async def gen() -> AsyncIterator[dict[str, str]]:
        try:
            async for event in stream():
                yield {"event": event["type"], "data": json.dumps(to_json(event), default=str)}
        except Exception as exc:
            # The status line is already sent: a failure mid-stream is a last "error" event.
            if isinstance(exc, CaseworkError):
                message = str(exc)
            else:
                logger.exception("unhandled error in an event stream")
                message = f"Internal error ({type(exc).__name__}); see the server log."
            yield {"event": "error", "data": json.dumps({"error": message})}

    return EventSourceResponse(gen())


class DepsCache(Generic[D]):
    """An app's deps, one per database: built on first use from the settings a request
    carries (nothing is opened when the router is mounted); ``factory`` replaces the build
    in tests."""

    def __init__(
        self, build: Callable[[Settings], D], factory: Callable[[], D] | None = None
    ) -> None:
        self._build = build
        self._factory = factory
        self._by_url: dict[str, D] = {}
        self._lock = threading.Lock()

    def get(self, settings: Settings) -> D:
        with self._lock:
            if settings.db_url not in self._by_url:
                built = self._factory() if self._factory is not None else self._build(settings)
                self._by_url[settings.db_url] = built
            return self._by_url[settings.db_url]

    async def dependency(self, served: Settings = Depends(get_settings_dep)) -> D:
        """The FastAPI dependency: ``d: Deps = Depends(cache.dependency)``. On the event loop:
        once built, the deps are a dict look-up (cheaper than the hop to a worker thread a
        plain ``def`` costs); the first request opens the stores on a worker thread."""
        built = self._by_url.get(served.db_url)
        if built is None:
            built = await run_in_threadpool(self.get, served)
        return built
