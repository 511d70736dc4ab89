"""HTTP routes of the vanpool app (to be mounted under ``/vanpool``): audit, cases, replies,
approvals, time. Not registered in the AppSpec yet: the router contract is changing on the
platform; ``router(deps_factory)`` takes how to build deps so the platform can wire it.

Thin: each route calls ``strategies`` / ``lifecycle`` and maps CaseworkError to HTTP (unknown
id: 404; bad input: 422).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import check_id
from casework.errors import CaseworkError, NotFoundError

__all__ = ["ApprovalRequest", "AuditRequest", "ReplyRequest", "TickRequest", "router"]

T = TypeVar("T")


class AuditRequest(BaseModel):
    strategy: Literal["rules", "agent"] = "rules"


class ReplyRequest(BaseModel):
    text: str = Field(min_length=1, max_length=20_000)
    strategy: Literal["rules", "agent"] = "rules"


class ApprovalRequest(BaseModel):
    decision: Literal["approve", "edit", "reject"]
    body: str | None = Field(
        default=None, max_length=20_000, description="For edit: the email text."
    )


class TickRequest(BaseModel):
    now: datetime | None = None
    strategy: Literal["rules", "agent"] = "rules"


def _http(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except NotFoundError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    except CaseworkError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc


def _case(c: Any) -> dict[str, Any]:
    return asdict(c)


def router(deps_factory: Callable[[], VanpoolDeps]) -> APIRouter:
    from casework.apps.vanpool.strategies import STRATEGIES, AuditInput, reply_to_case

    r = APIRouter(tags=["vanpool"])

    @r.get("/vanpools")
    def vanpools() -> list[str]:
        return _http(lambda: deps_factory().repo.vanpool_ids())

    @r.post("/vanpools/{vanpool_id}/audit")
    def audit(vanpool_id: str, req: AuditRequest | None = None) -> dict[str, Any]:
        strategy = (req or AuditRequest()).strategy
        deps = deps_factory()
        result = _http(lambda: STRATEGIES[strategy](AuditInput(vanpool_id), deps))
        return result.model_dump(mode="json")

    @r.get("/vanpools/{vanpool_id}/audit/events")
    def audit_events(vanpool_id: str) -> Any:
        """The Case Manager agent's audit of one vanpool, streamed as server-sent events."""
        from casework.apps.vanpool.agent import iter_case_manager
        from casework.server import sse_response

        deps = deps_factory()
        vid = _http(lambda: check_id("VP", vanpool_id))
        _http(lambda: deps.repo.get_vanpool(vid))  # 404 before the stream starts
        return sse_response(iter_case_manager(deps, vid))

    @r.get("/cases")
    def cases(status: str | None = None) -> list[dict[str, Any]]:
        return [_case(c) for c in _http(lambda: deps_factory().repo.list_cases(status))]

    @r.get("/cases/{case_id}")
    def case(case_id: str) -> dict[str, Any]:
        def load() -> dict[str, Any]:
            deps = deps_factory()
            c = deps.repo.get_case(check_id("CASE", case_id))
            messages = deps.repo.messages(c.thread_id) if c.thread_id else []
            return {
                **_case(c),
                "messages": [m.__dict__ for m in messages],
                "audit_log": deps.repo.audit_log(case_id=c.case_id),
            }

        return _http(load)

    @r.post("/cases/{case_id}/replies")
    def reply(case_id: str, req: ReplyRequest) -> dict[str, Any]:
        result = _http(lambda: reply_to_case(deps_factory(), case_id, req.text, req.strategy))
        return result.model_dump(mode="json")

    @r.get("/approvals")
    def approvals() -> list[dict[str, Any]]:
        return _http(lambda: lifecycle.pending_approvals(deps_factory()))

    @r.post("/approvals/{case_id}")
    def decide(case_id: str, req: ApprovalRequest) -> dict[str, Any]:
        c = _http(
            lambda: lifecycle.decide_approval(
                deps_factory(), check_id("CASE", case_id), req.decision, req.body
            )
        )
        return _case(c)

    @r.post("/tick")
    def tick(req: TickRequest | None = None) -> dict[str, Any]:
        req = req or TickRequest()
        deps = deps_factory()
        if req.now is not None:
            deps = deps.at(req.now)
        from casework.apps.vanpool import agent

        verifier = agent.agent_verify if req.strategy == "agent" else lifecycle.rules_verify
        return _http(lambda: lifecycle.tick(deps, verifier))

    return r
