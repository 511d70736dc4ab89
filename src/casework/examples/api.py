"""``/<app>/examples`` over HTTP: add, list, read, delete (each route's role declared)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from casework.config import Settings
from casework.examples import MAX_LIST, hook_of, memory_for, read_drafts

if TYPE_CHECKING:
    from fastapi import APIRouter

    from casework.registry import AppSpec
    from casework.runtime.context import Caller

__all__ = ["examples_router"]


def examples_router(spec: AppSpec) -> APIRouter:
    """``/<app>/examples``: a reviewer adds and deletes, any user lists and reads; each caller
    sees its own examples and the shared ones, and deletes only its own. Plain ``def`` routes:
    FastAPI runs them on a worker thread (embedding a case is CPU work)."""
    from fastapi import APIRouter, Body, Depends, Query

    from casework.apikit import allow, get_settings_dep
    from casework.runtime.context import Role

    r = APIRouter(tags=[spec.name])
    name = spec.name

    @r.post("/examples", status_code=201)
    def add(
        case: Any = Body(..., description="A case {inputs, expected}, or a list of them."),
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.add", Role.REVIEWER, own=True),
    ) -> list[dict[str, Any]]:
        given = case if isinstance(case, list) else [case]
        drafts = read_drafts(hook_of(spec), list(enumerate(given, start=1)))
        memory = memory_for(settings, name, caller)
        stored = memory.add_many(drafts, verified_by=caller.name, source="api")
        return [e.to_dict() for e in stored]

    @r.get("/examples")
    def list_(
        limit: int = Query(50, ge=1, le=MAX_LIST),
        offset: int = Query(0, ge=0),
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.list", own=True),
    ) -> list[dict[str, Any]]:
        found = memory_for(settings, name, caller).list(limit=limit, offset=offset)
        return [e.to_dict() for e in found]

    @r.get("/examples/{example_id}")
    def get(
        example_id: int,
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.read", own=True),
    ) -> dict[str, Any]:
        return memory_for(settings, name, caller).get(example_id).to_dict()

    @r.delete("/examples/{example_id}")
    def delete(
        example_id: int,
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.delete", Role.REVIEWER, own=True),
    ) -> dict[str, Any]:
        gone = memory_for(settings, name, caller).delete(example_id)
        return {"deleted": gone.id}

    return r
