"""The sign-in and sign-out pages: a throttled password form, a fresh server-side session
per sign-in, and a sign-out that ends it on the server."""

from __future__ import annotations

import math
import secrets

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casework.access.service import AuthError, open_access, verify_password
from casework.access.sessions import end_session, start_session
from casework.apikit import allow, public
from casework.runtime.context import Role
from casework.web.kit import PageError, check_csrf, render, safe_next, state_of, viewer_of
from casework.web.session import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    decode_session,
    encode_session,
    same_token,
)
from casework.web.throttle import LockKind, wait_words

__all__ = ["add_signin_routes", "add_signout_route"]


def add_signin_routes(web: APIRouter) -> None:
    """The public sign-in form and its POST (throttled, CSRF-checked, a fresh session)."""

    @web.get("/login", dependencies=[public("web.signin.form")])
    async def login_form(request: Request, next: str = "/") -> HTMLResponse:
        token = secrets.token_urlsafe(24)
        response = render(request, "login.html", login_csrf=token, next=safe_next(next), error="")
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
        state = state_of(request)
        target = safe_next(next)
        if not same_token(request.cookies.get(LOGIN_COOKIE, ""), csrf):
            raise PageError(403, "The sign-in form expired; reload the page and sign in again.")
        address = request.client.host if request.client else "unknown"

        def form_again(status: int, error: str, wait: float = 0) -> Response:
            token = secrets.token_urlsafe(24)
            response = render(
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


def add_signout_route(pages: APIRouter) -> None:
    @pages.post("/logout", dependencies=[allow("web.signout", Role.USER)])
    async def logout(request: Request, csrf: str = Form("")) -> Response:
        """Sign out: the session ends on the server, so a copy of the cookie opens nothing."""
        viewer = await viewer_of(request)
        check_csrf(viewer, csrf)
        state = state_of(request)
        session_id = decode_session(state.secret, request.cookies.get(SESSION_COOKIE))
        if session_id is not None:
            await run_in_threadpool(end_session, open_access(state.settings), session_id)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response
