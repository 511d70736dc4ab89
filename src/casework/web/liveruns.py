"""The live-run pages: start an app's run from a form, watch its events as they come (SSE,
resumed with ``Last-Event-ID``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casework.apikit import ServerEvent, allow, error_status, last_event_id, sse_response
from casework.errors import CaseworkError
from casework.runtime.context import Role
from casework.web.kit import (
    PageError,
    call,
    check_csrf,
    counts_of,
    provider_of,
    render,
    state_of,
    viewer_of,
)
from casework.web.uploads import discard, run_params

__all__ = ["SSE_POLL_SECONDS", "add_live_run_routes"]


SSE_POLL_SECONDS = 0.25


def add_live_run_routes(pages: APIRouter) -> None:
    """The runs page and its start form, one run's page, and its events as SSE."""
    reviewer = Role.REVIEWER

    @pages.get("/runs", dependencies=[allow("web.runs.list", reviewer)])
    async def runs_page(request: Request) -> HTMLResponse:
        state = state_of(request)
        forms = {name: p.run_fields() for name, p in state.providers.items() if p.run_fields()}
        runs = await call(state.store.recent, 50)
        return render(
            request,
            "runs.html",
            forms=forms,
            runs=runs,
            error="",
            counts=await call(counts_of, state),
        )

    @pages.post("/runs", dependencies=[allow("web.run.start", reviewer)])
    async def start_run(request: Request) -> Response:
        viewer = await viewer_of(request)
        form = await request.form()
        check_csrf(viewer, str(form.get("csrf", "")))
        state = state_of(request)
        provider = provider_of(state, str(form.get("app", "")))
        fields = provider.run_fields()
        try:
            params = await run_params(fields, form, state.settings.home)
        except CaseworkError as exc:
            raise PageError(error_status(exc), str(exc)) from None
        try:
            record = await call(state.runs.start, provider, params, viewer.caller)
        except PageError:
            discard(fields, params)  # refused before it started: its uploads go too
            raise
        return RedirectResponse(f"/runs/{record.id}", status_code=303)

    @pages.get("/runs/{run_id}", dependencies=[allow("web.run.read", reviewer)])
    async def run_page(request: Request, run_id: str) -> HTMLResponse:
        state = state_of(request)
        run = await call(state.store.get, run_id)
        events = await call(state.store.events_after, run_id)
        return render(
            request,
            "run.html",
            run=run,
            events=events,
            last=events[-1].seq if events else 0,
            counts=await call(counts_of, state),
        )

    @pages.get("/runs/{run_id}/events", dependencies=[allow("web.run.read", reviewer)])
    async def run_events(request: Request, run_id: str, after: int = 0) -> Response:
        """SSE: the run's events after ``Last-Event-ID`` (a reconnect) or ``after`` (a page
        that rendered some already), then an ``end`` event once it finished."""
        state = state_of(request)
        await call(state.store.get, run_id)
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
