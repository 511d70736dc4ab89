"""FastAPI app: mounts each registered app's router under /<app>, plus health and SSE helpers.

Every app router is mounted behind ``authenticate`` (a bearer token on every route); only
/health and the OpenAPI docs are open. Every route declares its permission
(``casework.apikit.allow``): one that does not is not mounted. Routes read the settings
``create_app`` was given and the caller through FastAPI dependencies (``casework.apikit``).
Request guards (``casework.server.guards``) bound every body and add security headers to every
answer; ``casework.server.redaction`` hides secrets in every answer and log line.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse

from casework.apikit import add_error_handler, declared_only, public, sse_response
from casework.config import Settings, get_settings
from casework.redact import install, redactor_for
from casework.server.auth import authenticate
from casework.server.guards import ERROR_HEADERS, BodyGuard, ProxyHeaders, SecurityHeaders
from casework.server.redaction import RedactAnswers
from casework.stores.sql import store_problem

__all__ = ["create_app", "sse_response"]

logger = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> FastAPI:
    from casework.registry import all_apps

    settings = settings or get_settings()
    app = FastAPI(title="casework", version="0.1.0")
    app.state.settings = settings

    # The one error -> HTTP table (casework.apikit), the 500 with the security headers.
    add_error_handler(app, crash_headers=ERROR_HEADERS)

    @app.get("/health", dependencies=[public("server.health")])
    def health() -> Any:
        problem = store_problem(settings.db_url)
        if problem is not None:  # open to anyone: the store's file name, never its folder
            return JSONResponse(
                {
                    "status": "unavailable",
                    "store": problem.store,
                    "error": f"The database {problem.store} cannot be used; the operator "
                    "restores it or fixes its permissions (`casework doctor` says which).",
                },
                status_code=503,
            )
        return {"status": "ok", "apps": sorted(all_apps())}

    from casework.examples.api import examples_router

    for name, spec in all_apps().items():
        routers = [spec.router(settings)] if spec.router is not None else []
        routers += [examples_router(spec)] if spec.examples is not None else []
        for router in routers:
            app.include_router(
                declared_only(router, f"/{name}"),
                prefix=f"/{name}",
                tags=[name],
                dependencies=[Depends(authenticate)],
            )
    from casework.web import mount_web  # the UI at /: its own session sign-in, not tokens

    mount_web(app, settings)
    # Added last is outermost: headers go on the guard's own refusals too, every answer of a
    # route or a guard passes the redactor (the 500 above says only the error's class), and
    # the client address is settled before anything reads it.
    redactor = redactor_for(settings)
    install(redactor)  # traces and reports written while serving use the same
    app.add_middleware(BodyGuard, limits=settings.server)
    app.add_middleware(SecurityHeaders, docs_paths=[app.docs_url, app.redoc_url])
    app.add_middleware(RedactAnswers, redactor=redactor)
    app.add_middleware(ProxyHeaders, trusted=settings.server.trusted_proxies)
    return app
