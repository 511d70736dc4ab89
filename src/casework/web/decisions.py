"""The inbox and the decision pages: review items of every app, one item with its runs, and
the reviewer's approve / edit / reject."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from casework.apikit import allow
from casework.errors import InputError, NotFoundError
from casework.examples import learn_from_review
from casework.runtime.context import Role
from casework.runtime.review_provider import WAITING, Action
from casework.web.inbox import AGES, InboxCursor, filters_for, inbox_page
from casework.web.kit import (
    PageError,
    Viewer,
    call,
    check_csrf,
    counts_of,
    provider_of,
    render,
    state_of,
    viewer_of,
)

__all__ = ["ACTIONS", "PAGE_SIZE", "add_decision_routes", "add_inbox_route", "trajectory"]


PAGE_SIZE = 50
ACTIONS: dict[str, Action] = {"approve": "approve", "edit": "edit", "reject": "reject"}


def trajectory(events: list[Any]) -> list[dict[str, Any]]:
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


def add_inbox_route(pages: APIRouter) -> None:
    """The inbox: every app's review items, filtered by app, status and age, a page at a time."""
    reviewer = Role.REVIEWER

    @pages.get("/", dependencies=[allow("web.inbox.read", reviewer)])
    async def inbox(
        request: Request,
        app: str = "",
        status: str = WAITING,
        age: str = "any",
        after: str = "",
        shown: int = 0,
    ) -> HTMLResponse:
        state = state_of(request)
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
            return page, counts_of(state), matching

        page, counts, matching = await call(load)
        query = {"app": app, "status": status, "age": age}
        next_link = ""
        if page.next_cursor is not None:
            params = query | {
                "after": page.next_cursor.encode(),
                "shown": str(shown + len(page.items)),
            }
            next_link = "/?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in params.items())
        return render(
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


def add_decision_routes(pages: APIRouter) -> None:
    """An item's decision page (its runs' tool calls) and the decision's POST."""
    reviewer = Role.REVIEWER

    @pages.get("/items/{app}/{item_id}", dependencies=[allow("web.item.read", reviewer)])
    async def item_page(request: Request, app: str, item_id: str, result: str = "") -> HTMLResponse:
        viewer = await viewer_of(request)
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
        state = state_of(request)
        provider = provider_of(state, app)
        detail = await call(provider.get, item_id)
        runs = await call(state.store.runs_for_item, app, item_id)
        run_steps = []
        for run in runs:
            events = await call(state.store.events_after, run.id)
            run_steps.append((run, trajectory(events)))
        return render(
            request,
            "item.html",
            status,
            app=app,
            detail=detail,
            runs=run_steps,
            result=result,
            error=error,
            counts=await call(counts_of, state),
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
        viewer = await viewer_of(request)
        check_csrf(viewer, csrf)
        provider = provider_of(state_of(request), app)
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
                learn_from_review, state_of(request).settings, app, outcome, viewer.caller
            )
        result = "applied" if outcome.applied else "first"
        return RedirectResponse(
            f"/items/{quote(app)}/{quote(item_id)}?result={result}", status_code=303
        )
