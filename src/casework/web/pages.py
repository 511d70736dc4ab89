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

import asyncio
import json
import math
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, select_autoescape

from casework.access.service import AuthError, open_access, verify_password
from casework.access.sessions import ActiveSession, check_session, end_session, start_session
from casework.apikit import (
    ServerEvent,
    allow,
    declared_only,
    error_status,
    last_event_id,
    public,
    sse_response,
)
from casework.config import Settings
from casework.errors import CaseworkError, InputError, NotFoundError
from casework.examples import learn_from_review
from casework.runtime.context import Caller, Role
from casework.runtime.review_provider import WAITING, Action, ReviewProvider
from casework.web.inbox import AGES, InboxCursor, filters_for, inbox_page
from casework.web.runs import RunManager
from casework.web.session import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    decode_session,
    encode_session,
    load_secret,
    same_token,
)
from casework.web.store import RunStore
from casework.web.throttle import LockKind, LoginThrottle, wait_words
from casework.web.uploads import discard, run_params

__all__ = ["WebState", "mount_web"]

PAGE_SIZE = 50
ACTIONS: dict[str, Action] = {"approve": "approve", "edit": "edit", "reject": "reject"}
SSE_POLL_SECONDS = 0.25
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


def _unjson(value: Any) -> Any:
    """Tool outputs are JSON text; shown as data they read better (anything else as it is)."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _pretty(value: Any) -> str:
    value = _unjson(value)
    if isinstance(value, dict) and "output" in value:
        value = value | {"output": _unjson(value["output"])}
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=1, default=str, ensure_ascii=False)


def _templates() -> Environment:
    folder = Path(str(files("casework.web").joinpath("templates")))
    env = Environment(
        loader=FileSystemLoader(folder),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = lambda d: d.strftime("%Y-%m-%d %H:%M") if d else ""
    env.filters["pretty"] = _pretty
    return env


def _state(request: Request) -> WebState:
    return request.app.state.web


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    state = _state(request)
    viewer = getattr(request.state, "viewer", None)
    html = state.env.get_template(name).render(
        viewer=viewer, csrf=viewer.session.csrf if viewer else "", request=request, **context
    )
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def _safe_next(target: str | None) -> str:
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


async def _viewer(request: Request) -> Viewer:
    """The signed-in user of a live server-side session (user re-read with it), once per
    request; SignInNeeded otherwise: no cookie, a forged one, or a session that was ended or
    timed out."""
    known = getattr(request.state, "viewer", None)
    if isinstance(known, Viewer):
        return known
    state = _state(request)
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


async def _signed_in(request: Request) -> None:
    """Every page but the public ones: the session's user, before its permission is checked."""
    await _viewer(request)


def _check_csrf(viewer: Viewer, token: str | None) -> None:
    if not same_token(viewer.session.csrf, token):
        raise PageError(
            403, "The form expired or did not come from this site; reload the page and try again."
        )


def _provider(state: WebState, app: str) -> ReviewProvider:
    provider = state.providers.get(app)
    if provider is None:
        known = ", ".join(sorted(state.providers)) or "none"
        raise PageError(
            404, f"No app {app!r} offers review items here; apps with an inbox: {known}."
        )
    return provider


async def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking provider or store call in the thread pool, its errors as pages."""
    try:
        return await run_in_threadpool(fn, *args, **kwargs)
    except CaseworkError as exc:  # the one table's status, as a page
        raise PageError(error_status(exc), str(exc)) from None


def _counts(state: WebState) -> dict[str, int]:
    filters = filters_for(WAITING, "any")
    return {name: p.count(filters) for name, p in state.providers.items()}


def _trajectory(events: list[Any]) -> list[dict[str, Any]]:
    """Tool calls in order with their inputs and outputs, from a run's stored events."""
    calls: dict[str, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    for ev in events:
        data = ev.data
        if data.get("type") == "tool":
            call = {
                "tool": data.get("tool"),
                "input": data.get("input"),
                "output": None,
                "ok": True,
            }
            calls[str(data.get("id"))] = call
            order.append(call)
        elif data.get("type") == "tool_result":
            found = calls.get(str(data.get("id")))
            if found is None:
                found = {"tool": data.get("tool"), "input": None, "output": None, "ok": True}
                order.append(found)
            found["output"] = data.get("output")
            found["ok"] = data.get("ok", True)
    return order


def build_router() -> APIRouter:
    """The UI's routes, each with its permission: public ones on ``web``, the rest on
    ``pages``, whose every route first finds the session's user."""
    web = APIRouter(include_in_schema=False, route_class=WebRoute)
    pages = APIRouter(route_class=WebRoute, dependencies=[Depends(_signed_in)])
    reviewer = Role.REVIEWER

    # ------------------------------------------------------------------ sign-in
    @web.get("/login", dependencies=[public("web.signin.form")])
    async def login_form(request: Request, next: str = "/") -> HTMLResponse:
        token = secrets.token_urlsafe(24)
        response = _render(request, "login.html", login_csrf=token, next=_safe_next(next), error="")
        response.set_cookie(LOGIN_COOKIE, token, max_age=3600, httponly=True, samesite="lax")
        return response

    @web.post("/login", dependencies=[public("web.signin")])
    async def login(
        request: Request,
        username: str = Form(""),
        password: str = Form(""),
        csrf: str = Form(""),
        next: str = Form("/"),
    ) -> Response:
        state = _state(request)
        target = _safe_next(next)
        if not same_token(request.cookies.get(LOGIN_COOKIE, ""), csrf):
            raise PageError(403, "The sign-in form expired; reload the page and sign in again.")
        address = request.client.host if request.client else "unknown"

        def form_again(status: int, error: str, wait: float = 0) -> Response:
            token = secrets.token_urlsafe(24)
            response = _render(
                request, "login.html", status, login_csrf=token, next=target, error=error
            )
            response.set_cookie(LOGIN_COOKIE, token, max_age=3600, httponly=True, samesite="lax")
            if wait:
                response.headers["Retry-After"] = str(math.ceil(wait))
            return response

        def locked(wait: float, kind: LockKind) -> Response:
            return form_again(
                429, f"Too many failed sign-ins for {kind}; try again in {wait_words(wait)}.", wait
            )

        wait, kind = state.throttle.locked_for(username, address)
        if wait:
            return locked(wait, kind)  # before the password is checked: the answer tells nothing
        engine = open_access(state.settings)
        try:
            caller = await run_in_threadpool(verify_password, engine, username.strip(), password)
        except AuthError as exc:
            wait, kind = state.throttle.failed(username, address)
            if wait:
                return locked(wait, kind)
            return form_again(401, str(exc))
        state.throttle.succeeded(username, address)
        # A session this browser held before ends: each sign-in gets a fresh id (no fixation).
        if old := decode_session(state.secret, request.cookies.get(SESSION_COOKIE)):
            await run_in_threadpool(end_session, engine, old)
        limits = state.settings.server
        _, session_id = await run_in_threadpool(
            start_session, engine, caller, max_seconds=limits.session_max_seconds, address=address
        )
        redirect = RedirectResponse(target, status_code=303)
        redirect.set_cookie(
            SESSION_COOKIE,
            encode_session(state.secret, session_id),
            max_age=limits.session_max_seconds,
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
        redirect.delete_cookie(LOGIN_COOKIE)
        return redirect

    @pages.post("/logout", dependencies=[allow("web.signout", Role.USER)])
    async def logout(request: Request, csrf: str = Form("")) -> Response:
        """Sign out: the session ends on the server, so a copy of the cookie opens nothing."""
        viewer = await _viewer(request)
        _check_csrf(viewer, csrf)
        state = _state(request)
        session_id = decode_session(state.secret, request.cookies.get(SESSION_COOKIE))
        if session_id is not None:
            await run_in_threadpool(end_session, open_access(state.settings), session_id)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response

    # ------------------------------------------------------------------ inbox
    @pages.get("/", dependencies=[allow("web.inbox.read", reviewer)])
    async def inbox(
        request: Request,
        app: str = "",
        status: str = WAITING,
        age: str = "any",
        after: str = "",
        shown: int = 0,
    ) -> HTMLResponse:
        state = _state(request)
        if app and app not in state.providers:
            raise PageError(404, f"No app {app!r} offers review items; pick one from the list.")
        providers = {app: state.providers[app]} if app else state.providers
        statuses = sorted({s for p in state.providers.values() for s in p.statuses})
        if status not in statuses:
            raise PageError(422, f"Unknown status {status!r}; use one of: {', '.join(statuses)}.")

        def load() -> tuple[Any, dict[str, int], int]:
            filters = filters_for(status, age)
            cursor = InboxCursor.decode(after) if after else None
            page = inbox_page(providers, filters, limit=PAGE_SIZE, after=cursor)
            matching = sum(p.count(filters) for p in providers.values() if status in p.statuses)
            return page, _counts(state), matching

        page, counts, matching = await _call(load)
        query = {"app": app, "status": status, "age": age}
        next_link = ""
        if page.next_cursor is not None:
            params = query | {
                "after": page.next_cursor.encode(),
                "shown": str(shown + len(page.items)),
            }
            next_link = "/?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in params.items())
        return _render(
            request,
            "inbox.html",
            items=page.items,
            counts=counts,
            matching=matching,
            first=shown + 1,
            next_link=next_link,
            apps=sorted(state.providers),
            statuses=statuses,
            ages=AGES,
            query=query,
            problems=state.problems,
        )

    # ------------------------------------------------------------------ decision page
    @pages.get("/items/{app}/{item_id}", dependencies=[allow("web.item.read", reviewer)])
    async def item_page(request: Request, app: str, item_id: str, result: str = "") -> HTMLResponse:
        viewer = await _viewer(request)
        return await _item(request, viewer, app, item_id, result=result)

    async def _item(
        request: Request,
        viewer: Viewer,
        app: str,
        item_id: str,
        *,
        result: str = "",
        error: str = "",
        status: int = 200,
    ) -> HTMLResponse:
        state = _state(request)
        provider = _provider(state, app)
        detail = await _call(provider.get, item_id)
        runs = await _call(state.store.runs_for_item, app, item_id)
        run_steps = []
        for run in runs:
            events = await _call(state.store.events_after, run.id)
            run_steps.append((run, _trajectory(events)))
        return _render(
            request,
            "item.html",
            status,
            app=app,
            detail=detail,
            runs=run_steps,
            result=result,
            error=error,
            counts=await _call(_counts, state),
        )

    @pages.post("/items/{app}/{item_id}/decide", dependencies=[allow("web.item.decide", reviewer)])
    async def decide(
        request: Request,
        app: str,
        item_id: str,
        action: str = Form(""),
        note: str = Form(""),
        edit: str = Form(""),
        csrf: str = Form(""),
    ) -> Response:
        viewer = await _viewer(request)
        _check_csrf(viewer, csrf)
        provider = _provider(_state(request), app)
        if action not in ACTIONS:
            raise PageError(422, "Choose approve, edit or reject.")
        if len(note) > 1000:
            raise PageError(422, "The note is too long; keep it under 1,000 characters.")
        try:
            outcome = await run_in_threadpool(
                provider.decide,
                item_id,
                ACTIONS[action],
                note=note.strip(),
                edit=edit.strip() or None,
                caller=viewer.caller,
            )
        except NotFoundError as exc:
            raise PageError(404, str(exc)) from None
        except InputError as exc:
            return await _item(request, viewer, app, item_id, error=str(exc), status=422)
        if outcome.example is not None:  # the verified answer becomes an example
            await run_in_threadpool(
                learn_from_review, _state(request).settings, app, outcome, viewer.caller
            )
        result = "applied" if outcome.applied else "first"
        return RedirectResponse(
            f"/items/{quote(app)}/{quote(item_id)}?result={result}", status_code=303
        )

    # ------------------------------------------------------------------ live runs
    @pages.get("/runs", dependencies=[allow("web.runs.list", reviewer)])
    async def runs_page(request: Request) -> HTMLResponse:
        state = _state(request)
        forms = {name: p.run_fields() for name, p in state.providers.items() if p.run_fields()}
        runs = await _call(state.store.recent, 50)
        return _render(
            request,
            "runs.html",
            forms=forms,
            runs=runs,
            error="",
            counts=await _call(_counts, state),
        )

    @pages.post("/runs", dependencies=[allow("web.run.start", reviewer)])
    async def start_run(request: Request) -> Response:
        viewer = await _viewer(request)
        form = await request.form()
        _check_csrf(viewer, str(form.get("csrf", "")))
        state = _state(request)
        provider = _provider(state, str(form.get("app", "")))
        fields = provider.run_fields()
        try:
            params = await run_params(fields, form, state.settings.home)
        except CaseworkError as exc:
            raise PageError(error_status(exc), str(exc)) from None
        try:
            record = await _call(state.runs.start, provider, params, viewer.caller)
        except PageError:
            discard(fields, params)  # refused before it started: its uploads go too
            raise
        return RedirectResponse(f"/runs/{record.id}", status_code=303)

    @pages.get("/runs/{run_id}", dependencies=[allow("web.run.read", reviewer)])
    async def run_page(request: Request, run_id: str) -> HTMLResponse:
        state = _state(request)
        run = await _call(state.store.get, run_id)
        events = await _call(state.store.events_after, run_id)
        return _render(
            request,
            "run.html",
            run=run,
            events=events,
            last=events[-1].seq if events else 0,
            counts=await _call(_counts, state),
        )

    @pages.get("/runs/{run_id}/events", dependencies=[allow("web.run.read", reviewer)])
    async def run_events(request: Request, run_id: str, after: int = 0) -> Response:
        """SSE: the run's events after ``Last-Event-ID`` (a reconnect) or ``after`` (a page
        that rendered some already), then an ``end`` event once it finished."""
        state = _state(request)
        await _call(state.store.get, run_id)
        # A reconnect's Last-Event-ID wins; junk in it (or in ``after``) counts as none.
        last = last_event_id(request.headers.get("last-event-id")) or last_event_id(str(after))

        async def stream() -> AsyncIterator[ServerEvent]:
            nonlocal last
            while True:
                run = await run_in_threadpool(state.store.get, run_id)
                for ev in await run_in_threadpool(state.store.events_after, run_id, last):
                    last = ev.seq
                    yield ServerEvent(ev.data, event=ev.type, id=ev.seq)
                if run.finished:
                    yield ServerEvent({"status": run.status}, event="end")
                    return
                await asyncio.sleep(SSE_POLL_SECONDS)

        return sse_response(stream())

    # ------------------------------------------------------------------ evaluation runs
    @pages.get("/evals", dependencies=[allow("web.evals.list", reviewer)])
    async def evals_page(request: Request) -> HTMLResponse:
        state = _state(request)
        from casework.evals.store import list_runs

        runs = await _call(list_runs, limit=200, settings=state.settings)
        reports = {
            r.run_id: bool(r.run_dir and (Path(r.run_dir) / "report.html").is_file()) for r in runs
        }
        return _render(
            request, "evals.html", runs=runs, reports=reports, counts=await _call(_counts, state)
        )

    @pages.get("/evals/compare", dependencies=[allow("web.evals.compare", reviewer)])
    async def evals_compare(request: Request, a: str = "", b: str = "") -> HTMLResponse:
        state = _state(request)
        if not a or not b or a == b:
            raise PageError(422, "Pick two different evaluation runs to compare.")
        from casework.evals.compare import compare_runs, render_compare_html
        from casework.evals.store import load_run

        def build() -> str:
            return render_compare_html(
                compare_runs(
                    load_run(a, settings=state.settings), load_run(b, settings=state.settings)
                )
            )

        html = await _call(build)
        return HTMLResponse(html, headers={"Content-Security-Policy": REPORT_CSP})

    @pages.get(
        "/evals/{run_id}/files/{path:path}", dependencies=[allow("web.evals.file", reviewer)]
    )
    async def eval_file(request: Request, run_id: str, path: str) -> Response:
        state = _state(request)
        from casework.evals.store import list_runs, resolve_run_id

        def find() -> Path:
            full = resolve_run_id(run_id, settings=state.settings)
            run = next(
                (r for r in list_runs(limit=10_000, settings=state.settings) if r.run_id == full),
                None,
            )
            if run is None or not run.run_dir:
                raise NotFoundError(f"Evaluation run {run_id} has no stored report folder.")
            missing = NotFoundError(f"No file {path!r} in the report of run {run_id}.")
            wanted = Path(path)
            # Only a relative path without '..' and NUL names a file in the folder; a symlink
            # that leads out of it is caught by resolving both.
            if "\x00" in path or wanted.is_absolute() or ".." in wanted.parts:
                raise missing
            root = Path(run.run_dir).resolve()
            target = (root / wanted).resolve()
            if not target.is_relative_to(root) or not target.is_file():
                raise missing
            return target

        target = await _call(find)
        return FileResponse(target, headers={"Content-Security-Policy": REPORT_CSP})

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
        env=_templates(),
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
        return _render(request, "error.html", exc.status, message=exc.message)

    def error_page(request: Request, status: int, message: str) -> Response:
        return _render(request, "error.html", status, message=message)

    app.state.error_page = error_page  # the one error table's answers, as pages

    app.include_router(build_router())
    return state
