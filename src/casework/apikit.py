"""What every app's ``api.py`` shares, below the apps and below ``casework.server``: server-sent
events, the one error -> HTTP table, and the per-database deps cache.

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
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar, cast

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sse_starlette.sse import EventSourceResponse

from casework.access.service import AuthError
from casework.config import Settings
from casework.errors import (
    CaseworkError,
    ConfigError,
    InputError,
    ModelError,
    NotFoundError,
    StoreUnavailable,
)
from casework.runtime.context import PermissionDenied, get_settings_dep
from casework.runtime.events import Event, to_json

__all__ = [
    "DepsCache",
    "RequestTooLarge",
    "add_error_handler",
    "error_body",
    "error_response",
    "error_status",
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


def _size(n: int) -> str:
    mb = n / (1024 * 1024)
    return f"{mb:g} MB" if mb >= 1 else f"{n:,} bytes"


_STATUS: list[tuple[type[CaseworkError], int]] = [
    (AuthError, 401),  # e.g. a sign-in route checking a password
    (RequestTooLarge, 413),
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
    return JSONResponse(error_body(exc), status_code=status, headers=headers)


def add_error_handler(app: FastAPI) -> None:
    """Answer every ``CaseworkError`` a route raises with :func:`error_response`."""

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        return error_response(cast(CaseworkError, exc))  # registered for CaseworkError only

    app.add_exception_handler(CaseworkError, handle)


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
