"""HTTP routes of the vanpool app, mounted under ``/vanpool`` behind the platform's token:
audit (also as server-sent events), cases, replies, approvals, time.

Thin: each route calls the same ``strategies`` / ``lifecycle`` functions as the CLI and maps
CaseworkError to HTTP (unknown id: 404; bad input: 422). Deciding an approval needs the
reviewer role, and the audit log names the caller who decided.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, Field

from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import check_id
from casework.config import Settings
from casework.errors import CaseworkError, NotFoundError
from casework.runtime.context import Caller, Role, get_settings_dep, require_role

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


def router(
    settings: Settings | None = None, deps_factory: Callable[[], VanpoolDeps] | None = None
) -> APIRouter:
    """The routes. Nothing is opened at mount time: deps are built on first use from the
    settings each request carries, once per database; ``deps_factory`` for tests."""
    import threading

    from casework.apps.vanpool.strategies import STRATEGIES, AuditInput, reply_to_case

    r = APIRouter(tags=["vanpool"])
    holder: dict[str, VanpoolDeps] = {}
    lock = threading.Lock()

    def deps_of(served: Settings) -> VanpoolDeps:
        with lock:
            if served.db_url not in holder:
                if deps_factory is not None:
                    holder[served.db_url] = deps_factory()
                else:
                    from casework.apps.vanpool.deps import build_deps

                    holder[served.db_url] = build_deps(served)
            return holder[served.db_url]

    def deps(served: Settings = Depends(get_settings_dep)) -> VanpoolDeps:
        return deps_of(served)

    reviewer = require_role(Role.REVIEWER)

    @r.get("/vanpools")
    def vanpools(d: VanpoolDeps = Depends(deps)) -> list[str]:
        return _http(lambda: d.repo.vanpool_ids())

    @r.post("/vanpools/{vanpool_id}/audit")
    def audit(
        vanpool_id: str, req: AuditRequest | None = None, d: VanpoolDeps = Depends(deps)
    ) -> dict[str, Any]:
        strategy = (req or AuditRequest()).strategy
        result = _http(lambda: STRATEGIES[strategy](AuditInput(vanpool_id), d))
        return result.model_dump(mode="json")

    @r.get("/vanpools/{vanpool_id}/audit/events")
    def audit_events(vanpool_id: str, d: VanpoolDeps = Depends(deps)) -> Any:
        """The Case Manager agent's audit of one vanpool, streamed as server-sent events."""
        from casework.apps.vanpool.agent import iter_case_manager
        from casework.server import sse_response

        vid = _http(lambda: check_id("VP", vanpool_id))
        _http(lambda: d.repo.get_vanpool(vid))  # 404 before the stream starts
        return sse_response(iter_case_manager(d, vid))

    @r.get("/cases")
    def cases(status: str | None = None, d: VanpoolDeps = Depends(deps)) -> list[dict[str, Any]]:
        return [_case(c) for c in _http(lambda: d.repo.list_cases(status))]

    @r.get("/cases/{case_id}")
    def case(case_id: str, d: VanpoolDeps = Depends(deps)) -> dict[str, Any]:
        def load() -> dict[str, Any]:
            c = d.repo.get_case(check_id("CASE", case_id))
            messages = d.repo.messages(c.thread_id) if c.thread_id else []
            return {
                **_case(c),
                "messages": [m.__dict__ for m in messages],
                "audit_log": d.repo.audit_log(case_id=c.case_id),
            }

        return _http(load)

    @r.post("/cases/{case_id}/replies")
    def reply(case_id: str, req: ReplyRequest, d: VanpoolDeps = Depends(deps)) -> dict[str, Any]:
        result = _http(lambda: reply_to_case(d, case_id, req.text, req.strategy))
        return result.model_dump(mode="json")

    @r.get("/approvals")
    def approvals(d: VanpoolDeps = Depends(deps)) -> list[dict[str, Any]]:
        return _http(lambda: lifecycle.pending_approvals(d))

    @r.post("/approvals/{case_id}")
    def decide(
        case_id: str,
        req: ApprovalRequest,
        d: VanpoolDeps = Depends(deps),
        caller: Caller = Depends(reviewer),
    ) -> dict[str, Any]:
        """Resume the case's paused action (the same call as `casework vanpool approve`)."""
        c = _http(
            lambda: lifecycle.decide_approval(
                d, check_id("CASE", case_id), req.decision, req.body, actor=caller.name
            )
        )
        return _case(c)

    @r.post("/tick")
    def tick(req: TickRequest | None = None, d: VanpoolDeps = Depends(deps)) -> dict[str, Any]:
        req = req or TickRequest()
        deps = d.at(req.now) if req.now is not None else d
        from casework.apps.vanpool import agent

        verifier = agent.agent_verify if req.strategy == "agent" else lifecycle.rules_verify
        return _http(lambda: lifecycle.tick(deps, verifier))

    return r
