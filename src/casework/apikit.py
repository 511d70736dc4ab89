"""What every app's ``api.py`` shares, below the apps and below ``casework.server``: who may call
a route (the permission every route declares), the caller and settings as dependencies,
server-sent events (and the one ``Last-Event-ID`` parse), the one error -> HTTP table (request
validation errors included, which never echo the body back), the one way to name an uploaded
file, and the per-database deps cache.

An app's router imports this module, never ``casework.server`` (the server mounts the
routers, so a router importing it would import its own caller). Routes raise
``CaseworkError`` subclasses and the exception handler answers them from :func:`error_status`
with ``{"error": <one sentence>, "kind": <the error's class>}``: the server installs it with
:func:`add_error_handler`, and so does a test that mounts one router on a bare app::

    cache = DepsCache(build_deps, deps_factory)

    @r.get("/things/{thing_id}")
    def thing(
        thing_id: str,
        d: Deps = Depends(cache.dependency),
        caller: Caller = allow("things.read", Role.USER, own=True),
    ) -> dict[str, Any]:
        return service.thing(d, thing_id, caller)  # unknown (or another's) id: a 404

Default deny: a route that declares no permission (``allow`` or ``public``) is not mounted
(:func:`declared_only`), so a forgotten declaration is a missing route, never an open one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute, APIRouter
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
from casework.runtime.context import Caller, PermissionDenied, Role
from casework.runtime.events import Event, to_json

__all__ = [
    "DepsCache",
    "ErrorPage",
    "Permission",
    "RequestTooLarge",
    "ServerEvent",
    "TooManyAttempts",
    "add_error_handler",
    "allow",
    "chosen_model",
    "current_caller",
    "declared_only",
    "error_body",
    "error_response",
    "error_status",
    "get_settings_dep",
    "last_event_id",
    "offered_models",
    "permission_of",
    "permission_table",
    "public",
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
    (StoreUnavailable, 503),  # the database file is damaged or unwritable: the operator acts
]
"""The one error -> HTTP table, most specific class first; any other error is a 500."""


async def get_settings_dep(request: Request) -> Settings:
    """FastAPI dependency: the settings ``create_app(settings)`` was built with.

    ``async`` although it awaits nothing: FastAPI runs a plain ``def`` dependency on a worker
    thread, a hop that costs more than the attribute read (and this runs on every request)."""
    settings: Settings = request.app.state.settings  # Starlette's app.state is untyped
    return settings


async def current_caller(request: Request) -> Caller:
    """FastAPI dependency: the caller the platform authenticated for this request (the API's
    bearer token, the web UI's session), read from ``request.state``.

    A router mounted without the platform's authentication gets a 401 here, never an anonymous
    caller: forgetting the mount-time dependency fails closed.
    """
    caller = getattr(request.state, "caller", None)
    if not isinstance(caller, Caller):
        raise AuthError("Send an API token in the Authorization header as 'Bearer TOKEN'.")
    return caller


# ---------------------------------------------------------------------- who may call a route


@dataclass(frozen=True)
class Permission:
    """What a route declares: the action it performs (``app.noun.verb``), the least role it
    needs (``None``: anyone, before sign-in), and whether it reaches only the caller's own
    objects (the repository scopes them by the caller: another user's id answers 404)."""

    action: str
    role: Role | None
    own: bool = False


@dataclass(frozen=True)
class _Allow(Permission):
    async def __call__(self, caller: Caller = Depends(current_caller)) -> Caller:
        if self.role is not None and not caller.has_role(self.role):
            raise PermissionDenied(
                f"This action needs the {self.role} role; {caller.name} is a {caller.role}."
            )
        return caller


@dataclass(frozen=True)
class _Public(Permission):
    async def __call__(self) -> None:
        return None


def allow(action: str, role: Role | str = Role.USER, *, own: bool = False) -> Any:
    """The permission of a route, as a parameter that receives the caller::

        caller: Caller = allow("vanpool.case.reply", Role.REVIEWER)

    or in ``dependencies=[allow(...)]`` when the handler does not need the caller. A caller
    below ``role`` gets ``PermissionDenied`` (403)."""
    return Depends(_Allow(action, Role(role), own))


def public(action: str) -> Any:
    """The declaration of a route anyone may call (the sign-in form, a static script)."""
    return Depends(_Public(action, None))


def permission_of(route: APIRoute) -> Permission | None:
    """The permission ``route`` declares (in its parameters or ``dependencies``), if any."""

    def walk(dependant: Dependant) -> Permission | None:
        for sub in dependant.dependencies:
            if isinstance(sub.call, Permission):
                return sub.call
            if (found := walk(sub)) is not None:
                return found
        return None

    return walk(route.dependant)


def _routes(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, APIRoute]]:
    """Every ``APIRoute`` with its full path, into included routers (FastAPI keeps an included
    router whole, as one ``_IncludedRouter`` entry, rather than copying its routes)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield prefix + route.path, route
        elif hasattr(route, "original_router") and hasattr(route, "include_context"):
            inner = prefix + route.include_context.prefix
            yield from _routes(route.original_router.routes, inner)


def declared_only(router: APIRouter, where: str) -> APIRouter:
    """``router`` without the routes that declare no permission (default deny), included
    routers too, each one dropped named in the log: an app author sees it at start-up, a
    caller gets a 404."""
    undeclared = {id(route) for _, route in _routes(router.routes) if permission_of(route) is None}
    if not undeclared:
        return router
    for path, route in _routes(router.routes, where):
        if id(route) in undeclared:
            logger.error(
                "not mounting %s %s: it declares no permission (casework.apikit.allow)",
                ",".join(sorted(route.methods or ())),
                path,
            )

    def prune(routes: list[Any]) -> None:
        routes[:] = [r for r in routes if id(r) not in undeclared]
        for r in routes:
            if hasattr(r, "original_router"):
                prune(r.original_router.routes)

    prune(router.routes)
    return router


def permission_table(app: FastAPI) -> list[dict[str, Any]]:
    """Every mounted route with its declaration: face (api, web), method, path, action, role,
    own objects."""
    rows = []
    for path, route in _routes(app.routes):
        declared = permission_of(route)
        for method in sorted((route.methods or set()) - {"HEAD"}):
            rows.append(
                {
                    "face": "web" if getattr(route, "renders_pages", False) else "api",
                    "method": method,
                    "path": path,
                    "action": declared.action if declared else None,
                    "role": str(declared.role) if declared and declared.role else "anyone",
                    "own": bool(declared and declared.own),
                }
            )
    return sorted(rows, key=lambda r: (r["path"], r["method"]))


def chosen_model(settings: Settings, name: str | None) -> str | None:
    """A model an HTTP caller named, when the operator offers it: one of the configured
    models (``[models]``) or of ``server.allowed_models``. Anything else, a ``replay:`` file
    above all (the server would open that path), is refused in one sentence (422): over HTTP
    the operator, not the caller, decides what runs and whose key it spends."""
    if name is None or not name.strip():
        return None
    name = name.strip()
    offered = offered_models(settings)
    if name.startswith("replay:") or name not in offered:
        raise InputError(
            f"Model {name!r} is not offered by this server; choose one of: "
            f"{', '.join(sorted(offered))} (the operator adds more to server.allowed_models)."
        )
    return name


def offered_models(settings: Settings) -> set[str]:
    """The models HTTP callers may choose: the configured ones and the allowlist."""
    configured = {v for v in settings.models.model_dump().values() if isinstance(v, str) and v}
    return {
        m for m in configured | set(settings.server.allowed_models) if not m.startswith("replay:")
    }


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
