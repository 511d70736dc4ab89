"""Who may call a route (the permission every route declares; an undeclared route is not
mounted), the caller and the settings as FastAPI dependencies, and the model a caller may pick."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, APIRouter

from casework.access.service import AuthError
from casework.config import Settings
from casework.errors import (
    InputError,
)
from casework.runtime.context import Caller, PermissionDenied, Role

logger = logging.getLogger(__name__)


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
