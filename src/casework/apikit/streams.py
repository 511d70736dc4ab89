"""Server-sent events: one response helper (ids, and the one ``Last-Event-ID`` parse a
reconnecting client's resume goes through)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any, cast

from sse_starlette.sse import EventSourceResponse

from casework.errors import CaseworkError
from casework.runtime.events import Event, to_json

MAX_EVENT_ID_DIGITS = 18
"""Event ids are row sequence numbers: 18 digits always fit a 64-bit integer."""

logger = logging.getLogger(__name__)


def last_event_id(value: str | None) -> int:
    """The event id in a ``Last-Event-ID`` header (a reconnecting client's last one seen): its
    number when it is plain ASCII digits a database can hold, else 0 (start over). Junk such
    as ``²`` (a digit to ``str.isdigit``, not to ``int``) or 5,000 digits is ignored."""
    value = (value or "").strip()
    if not value.isascii() or not value.isdigit() or len(value) > MAX_EVENT_ID_DIGITS:
        return 0
    return int(value)


@dataclass(frozen=True)
class ServerEvent:
    """One server-sent event: ``data`` (sent as JSON), its ``event`` name (none: the client's
    ``message``) and its ``id`` (what a reconnecting client sends back as ``Last-Event-ID``;
    read it with :func:`last_event_id`)."""

    data: Any
    event: str | None = None
    id: int | None = None


def sse_response(
    events: Iterator[Event | ServerEvent] | AsyncIterator[Event | ServerEvent],
    *,
    headers: dict[str, str] | None = None,
) -> EventSourceResponse:
    """The one way a route streams: runtime events (``event: <type>``, ``data: <json>``) or
    :class:`ServerEvent` items (ids and names of the route's own). A blocking iterator is
    advanced on a worker thread, and a failure mid-stream is a last ``error`` event (the
    status line is already sent), a ``CaseworkError``'s sentence or "internal error"."""

    async def stream() -> AsyncIterator[Event | ServerEvent]:
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
                yield cast(Event | ServerEvent, event)

    def frame(item: Event | ServerEvent) -> dict[str, str]:
        if not isinstance(item, ServerEvent):
            item = ServerEvent(to_json(item), event=item["type"])
        out = {"data": json.dumps(item.data, default=str)}
        if item.event is not None:
            out["event"] = item.event
        if item.id is not None:
            out["id"] = str(item.id)
        return out

    async def gen() -> AsyncIterator[dict[str, str]]:
        try:
            async for item in stream():
                yield frame(item)
        except Exception as exc:
            if isinstance(exc, CaseworkError):
                message = str(exc)
            else:
                logger.exception("unhandled error in an event stream")
                message = f"Internal error ({type(exc).__name__}); see the server log."
            yield {"event": "error", "data": json.dumps({"error": message})}

    return EventSourceResponse(gen(), headers=headers)
