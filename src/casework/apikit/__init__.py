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

The kit's modules, one job each: ``routes`` (permissions, the caller and settings dependencies,
the model a caller may pick), ``errors`` (the one table and its handlers), ``streams`` (SSE),
``uploads`` (an uploaded file's name) and ``depscache``; import their names from here.
"""

from __future__ import annotations

from casework.apikit.depscache import DepsCache
from casework.apikit.errors import (
    ErrorPage,
    RequestTooLarge,
    TooManyAttempts,
    add_error_handler,
    error_body,
    error_response,
    error_status,
)
from casework.apikit.routes import (
    Permission,
    allow,
    chosen_model,
    current_caller,
    declared_only,
    get_settings_dep,
    offered_models,
    permission_of,
    permission_table,
    public,
)
from casework.apikit.streams import ServerEvent, last_event_id, sse_response
from casework.apikit.uploads import safe_upload_name

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
