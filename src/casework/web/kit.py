"""What every page of the web UI shares: its state, rendering, the signed-in viewer, CSRF,
the page errors and the thread-pool call that turns the one error table into pages."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, select_autoescape

from casework.access.service import AuthError, open_access
from casework.access.sessions import ActiveSession, check_session
from casework.apikit import error_status
from casework.config import Settings
from casework.errors import CaseworkError
from casework.runtime.context import Caller, Role
from casework.runtime.review_provider import WAITING, ReviewProvider
from casework.web.inbox import filters_for
from casework.web.runs import RunManager
from casework.web.session import SESSION_COOKIE, decode_session, same_token
from casework.web.store import RunStore
from casework.web.throttle import LoginThrottle

__all__ = [
    "CSP",
    "PAGE_HEADERS",
    "REPORT_CSP",
    "PageError",
    "SignInNeeded",
    "Viewer",
    "WebRoute",
    "WebState",
    "call",
    "check_csrf",
    "counts_of",
    "provider_of",
    "render",
    "safe_next",
    "signed_in",
    "state_of",
    "templates",
    "viewer_of",
]
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
REPORT_CSP = (
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'none'"
)


class WebRoute(APIRoute):
    """A route of the UI: the one error table answers its errors as a page."""

    renders_pages = True


class SignInNeeded(Exception):
    """No valid session: the handler redirects to the sign-in page."""


class PageError(Exception):
    """A user-caused error shown as a page with one sentence and a 4xx status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Viewer:
    caller: Caller
    session: ActiveSession

    @property
    def reviewer(self) -> bool:
        return self.caller.has_role(Role.REVIEWER)


@dataclass
class WebState:
    settings: Settings
    secret: bytes
    providers: dict[str, ReviewProvider]
    store: RunStore
    runs: RunManager
    env: Environment
    problems: dict[str, str] = field(default_factory=dict)
    """Apps whose provider could not be built, with why (shown, never fatal)."""
    throttle: LoginThrottle = field(default_factory=LoginThrottle)
    """Failed sign-ins per user name, client address and both (see ``casework.web.throttle``)."""


def unjson(value: Any) -> Any:
    """Tool outputs are JSON text; shown as data they read better (anything else as it is)."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def pretty(value: Any) -> str:
    value = unjson(value)
    if isinstance(value, dict) and "output" in value:
        value = value | {"output": unjson(value["output"])}
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=1, default=str, ensure_ascii=False)


def templates() -> Environment:
    folder = Path(str(files("casework.web").joinpath("templates")))
    env = Environment(
        loader=FileSystemLoader(folder),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = lambda d: d.strftime("%Y-%m-%d %H:%M") if d else ""
    env.filters["pretty"] = pretty
    return env


def state_of(request: Request) -> WebState:
    return request.app.state.web


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    state = state_of(request)
    viewer = getattr(request.state, "viewer", None)
    html = state.env.get_template(name).render(
        viewer=viewer, csrf=viewer.session.csrf if viewer else "", request=request, **context
    )
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def safe_next(target: str | None) -> str:
    """``target`` when it is a path on this site (one leading slash), else ``/``; a browser
    drops tabs and newlines and reads a backslash as a slash, so none may appear."""
    if (
        target
        and target.startswith("/")
        and not target.startswith("//")
        and "\\" not in target
        and not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target)
    ):
        return target
    return "/"


async def viewer_of(request: Request) -> Viewer:
    """The signed-in user of a live server-side session (user re-read with it), once per
    request; SignInNeeded otherwise: no cookie, a forged one, or a session that was ended or
    timed out."""
    known = getattr(request.state, "viewer", None)
    if isinstance(known, Viewer):
        return known
    state = state_of(request)
    session_id = decode_session(state.secret, request.cookies.get(SESSION_COOKIE))
    if session_id is None:
        raise SignInNeeded()
    try:
        active = await run_in_threadpool(
            check_session,
            open_access(state.settings),
            session_id,
            idle_seconds=state.settings.server.session_idle_seconds,
        )
    except AuthError:
        raise SignInNeeded() from None
    viewer = Viewer(active.caller, active)
    request.state.viewer = viewer
    request.state.caller = viewer.caller  # what the routes' permissions check
    return viewer


async def signed_in(request: Request) -> None:
    """Every page but the public ones: the session's user, before its permission is checked."""
    await viewer_of(request)


def check_csrf(viewer: Viewer, token: str | None) -> None:
    if not same_token(viewer.session.csrf, token):
        raise PageError(
            403, "The form expired or did not come from this site; reload the page and try again."
        )


def provider_of(state: WebState, app: str) -> ReviewProvider:
    provider = state.providers.get(app)
    if provider is None:
        known = ", ".join(sorted(state.providers)) or "none"
        raise PageError(
            404, f"No app {app!r} offers review items here; apps with an inbox: {known}."
        )
    return provider


async def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking provider or store call in the thread pool, its errors as pages."""
    try:
        return await run_in_threadpool(fn, *args, **kwargs)
    except CaseworkError as exc:  # the one table's status, as a page
        raise PageError(error_status(exc), str(exc)) from None


def counts_of(state: WebState) -> dict[str, int]:
    filters = filters_for(WAITING, "any")
    return {name: p.count(filters) for name, p in state.providers.items()}
