"""FastAPI app: mounts each registered app's router under /<app>, plus health and SSE helpers.

Every app router is mounted behind ``authenticate`` (a bearer token on every route); only
/health and the OpenAPI docs are open. Routes read the settings ``create_app`` was given and
the caller through FastAPI dependencies (``casework.runtime.context``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from sse_starlette.sse import EventSourceResponse

from casework.access.service import AuthError
from casework.config import Settings, get_settings
from casework.errors import CaseworkError, InputError, NotFoundError
from casework.runtime.context import PermissionDenied
from casework.runtime.events import Event, to_json
from casework.server.auth import authenticate

__all__ = ["create_app", "sse_response"]


def create_app(settings: Settings | None = None) -> FastAPI:
    from casework.registry import all_apps

    settings = settings or get_settings()
    app = FastAPI(title="casework", version="0.1.0")
    app.state.settings = settings

    @app.exception_handler(CaseworkError)
    async def _casework_error(request: Request, exc: CaseworkError) -> JSONResponse:
        if isinstance(exc, AuthError):  # e.g. a sign-in route checking a password
            return JSONResponse(
                {"error": str(exc), "kind": type(exc).__name__},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        status = (
            404
            if isinstance(exc, NotFoundError)
            else 403
            if isinstance(exc, PermissionDenied)
            else 422
            if isinstance(exc, InputError)
            else 500
        )
        return JSONResponse({"error": str(exc), "kind": type(exc).__name__}, status_code=status)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "apps": sorted(all_apps())}

    for name, spec in all_apps().items():
        if spec.router is not None:
            app.include_router(
                spec.router(settings),
                prefix=f"/{name}",
                tags=[name],
                dependencies=[Depends(authenticate)],
            )
    from casework.web import mount_web  # the UI at /: its own session sign-in, not tokens

    mount_web(app, settings)
    return app


def sse_response(events: Iterator[Event] | AsyncIterator[Event]) -> EventSourceResponse:
    """Stream runtime events as SSE (`event: <type>`, `data: <json>`)."""

    async def gen() -> AsyncIterator[dict[str, str]]:
        if hasattr(events, "__aiter__"):
            async for event in events:  # type: ignore[union-attr]
                yield {"event": event["type"], "data": json.dumps(to_json(event), default=str)}
        else:
            iterator = iter(events)  # type: ignore[arg-type]
            sentinel = object()
            while True:
                event = await asyncio.to_thread(next, iterator, sentinel)
                if event is sentinel:
                    break
                yield {"event": event["type"], "data": json.dumps(to_json(event), default=str)}

    return EventSourceResponse(gen())
