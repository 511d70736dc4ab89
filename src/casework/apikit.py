"""What every app's ``api.py`` shares, below the apps and below ``casework.server``: server-sent
events, the error -> HTTP mapping of a route's call, and the per-database deps cache.

An app's router imports this module, never ``casework.server`` (the server mounts the
routers, so a router importing it would import its own caller)::

    cache = DepsCache(build_deps, deps_factory)

    @r.get("/things/{thing_id}")
    def thing(thing_id: str, d: Deps = Depends(cache.dependency)) -> dict[str, Any]:
        return http_call(lambda: service.thing(d, thing_id))

Note (issue #20): ``casework.server.sse_response`` is the same function as
:func:`sse_response` here; the server should import it from this module, and its exception
handler and :func:`http_call` should share one table.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Generic, TypeVar

from fastapi import Depends, HTTPException
from sse_starlette.sse import EventSourceResponse

from casework.config import Settings
from casework.errors import CaseworkError, NotFoundError
from casework.runtime.context import PermissionDenied, get_settings_dep
from casework.runtime.events import Event, to_json

__all__ = ["DepsCache", "http_call", "http_status", "sse_response"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
D = TypeVar("D")


def http_status(exc: CaseworkError) -> int:
    """The status of an error a route's call raised: unknown id 404, not allowed 403, any
    other error the caller can act on 422."""
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, PermissionDenied):
        return 403
    return 422


def http_call(fn: Callable[[], T]) -> T:
    """Run ``fn``; a ``CaseworkError`` becomes an ``HTTPException`` with its one sentence."""
    try:
        return fn()
    except CaseworkError as exc:
        raise HTTPException(status_code=http_status(exc), detail=str(exc)) from exc


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

    def dependency(self, served: Settings = Depends(get_settings_dep)) -> D:
        """The FastAPI dependency: ``d: Deps = Depends(cache.dependency)``."""
        return self.get(served)
