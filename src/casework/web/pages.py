"""The web UI's pages: sign-in, inbox, decision pages, live runs, evaluation runs.

Server-rendered Jinja2 (autoescaped) with one small script for the live-run page. Every page
declares its permission like an API route (``casework.apikit.allow``; an undeclared one is not
mounted): the sign-in form and the page script are public, the rest needs a signed-in user
(else a redirect to the sign-in page) and all but sign-out the reviewer role: the inbox
crosses users (one user's documents and receipts are another's business only as a reviewer),
so a plain user gets a 403 page and uses the API, which scopes to them. Errors are answered
from the one table (``casework.apikit.error_status``) as a page. Every POST carries the
session's CSRF token. Apps are reached only through their ``ReviewProvider``
(``AppSpec.review``).
"""

from __future__ import annotations

from importlib.resources import files
from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response

from casework.apikit import declared_only, public
from casework.config import Settings
from casework.errors import CaseworkError
from casework.runtime.review_provider import ReviewProvider
from casework.web.decisions import add_decision_routes, add_inbox_route
from casework.web.evalpages import add_eval_routes
from casework.web.kit import (
    PageError,
    SignInNeeded,
    WebRoute,
    WebState,
    render,
    signed_in,
    templates,
)
from casework.web.liveruns import add_live_run_routes
from casework.web.runs import RunManager
from casework.web.session import load_secret
from casework.web.signin import add_signin_routes, add_signout_route
from casework.web.store import RunStore
from casework.web.throttle import LoginThrottle

__all__ = ["WebState", "build_router", "mount_web"]


def build_router() -> APIRouter:
    """The UI's routes, each with its permission: public ones on ``web``, the rest on
    ``pages``, whose every route first finds the session's user. One module per job:
    sign-in, the inbox and decisions, live runs, evaluation runs."""
    web = APIRouter(include_in_schema=False, route_class=WebRoute)
    pages = APIRouter(route_class=WebRoute, dependencies=[Depends(signed_in)])
    add_signin_routes(web)
    add_signout_route(pages)
    add_inbox_route(pages)
    add_decision_routes(pages)
    add_live_run_routes(pages)
    add_eval_routes(pages)

    @web.get("/static/web.js", dependencies=[public("web.static")])
    async def script() -> Response:
        body = files("casework.web").joinpath("static").joinpath("web.js").read_text()
        return PlainTextResponse(body, media_type="text/javascript")

    web.include_router(pages)
    return declared_only(web, "")


def mount_web(app: FastAPI, settings: Settings) -> WebState:
    """Mount the UI at ``/`` of ``app``: state, exception pages, security headers, routes."""
    from casework.registry import all_apps

    providers: dict[str, ReviewProvider] = {}
    problems: dict[str, str] = {}
    for name, spec in sorted(all_apps().items()):
        if spec.review is None:
            continue
        try:
            provider = spec.review(settings)
        except CaseworkError as exc:
            problems[name] = str(exc)
            continue
        if isinstance(provider, ReviewProvider):
            providers[name] = provider
        else:
            problems[name] = "its review hook did not return a ReviewProvider; the app needs a fix."
    store = RunStore(settings)
    state = WebState(
        settings=settings,
        secret=load_secret(settings),
        providers=providers,
        store=store,
        runs=RunManager(store),
        env=templates(),
        problems=problems,
        throttle=LoginThrottle(
            failures=settings.server.login_failures,
            lockout_seconds=settings.server.login_lockout_seconds,
            name_failures=settings.server.login_name_failures,
            address_failures=settings.server.login_address_failures,
        ),
    )
    app.state.web = state

    @app.exception_handler(SignInNeeded)
    async def _sign_in(request: Request, exc: SignInNeeded) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        if request.method != "GET" or request.url.path.endswith("/events"):
            return PlainTextResponse("Sign in first: open /login.", status_code=401)
        return RedirectResponse(f"/login?next={quote(target, safe='')}", status_code=303)

    @app.exception_handler(PageError)
    async def _page_error(request: Request, exc: PageError) -> Response:
        return render(request, "error.html", exc.status, message=exc.message)

    def error_page(request: Request, status: int, message: str) -> Response:
        return render(request, "error.html", status, message=message)

    app.state.error_page = error_page  # the one error table's answers, as pages

    app.include_router(build_router())
    return state
