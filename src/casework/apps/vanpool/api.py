"""HTTP routes of the vanpool app, mounted under ``/vanpool`` behind the platform's token:
audit (also as server-sent events), cases, replies, approvals, time.

Thin: each route calls the same ``service`` functions as the CLI; a CaseworkError they raise is
answered by the one error table of ``casework.apikit`` (unknown id: 404; bad input: 422).
Every route declares its permission: the vanpool ids are for any user; cases name riders
(e-mail, home ZIP) and every workflow step changes them (audits, replies, time, approvals),
so the rest needs the reviewer role, and the caller is handed to the run: the audit log
names them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, replace
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from casework.apikit import DepsCache, allow, sse_response
from casework.apps.vanpool import service
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.models import check_id
from casework.config import Settings
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller, Role
from casework.runtime.runconfig import RunConfig

__all__ = ["ApprovalRequest", "AuditRequest", "ReplyRequest", "TickRequest", "router"]

Deps = Callable[..., Awaitable[VanpoolDeps]]
"""The per-database deps dependency of the routes."""
ConfigFor = Callable[[VanpoolDeps, Caller], RunConfig]
"""The run's config for a caller."""


class AuditRequest(BaseModel):
    strategy: Literal["cascade", "rules", "agent"] = "cascade"


class ReplyRequest(BaseModel):
    text: str = Field(min_length=1, max_length=20_000)
    strategy: Literal["cascade", "rules", "agent"] = "cascade"


class ApprovalRequest(BaseModel):
    decision: Literal["approve", "edit", "reject"]
    body: str | None = Field(
        default=None, max_length=20_000, description="For edit: the email text."
    )


class TickRequest(BaseModel):
    now: datetime | None = None
    strategy: Literal["cascade", "rules", "agent"] = "cascade"


def _case(c: Any) -> dict[str, Any]:
    return asdict(c)


def router(
    settings: Settings | None = None,
    deps_factory: Callable[[], VanpoolDeps] | None = None,
    *,
    models: RoleModels | None = None,
) -> APIRouter:
    """The routes. Nothing is opened at mount time: deps are built on first use from the
    settings each request carries, once per database; the agents run on the settings' models.
    ``deps_factory`` and ``models`` (scripted ones) for tests."""
    r = APIRouter(tags=["vanpool"])
    cache = DepsCache(build_deps, deps_factory)
    deps = cache.dependency

    def run_config(d: VanpoolDeps, caller: Caller) -> RunConfig:
        config = RunConfig.of(d.settings, caller=caller)
        return replace(config, models=models) if models is not None else config

    _vanpool_routes(r, deps, run_config)
    _case_routes(r, deps, run_config)
    _approval_routes(r, deps, run_config)
    return r


def _vanpool_routes(r: APIRouter, deps: Deps, run_config: ConfigFor) -> None:
    """List vanpools; audit one, answered whole or streamed as SSE."""

    @r.get("/vanpools")
    def vanpools(
        d: VanpoolDeps = Depends(deps), _: Caller = allow("vanpool.vanpools.list")
    ) -> list[str]:
        return d.repo.vanpool_ids()

    @r.post("/vanpools/{vanpool_id}/audit")
    def audit(
        vanpool_id: str,
        req: AuditRequest | None = None,
        d: VanpoolDeps = Depends(deps),
        caller: Caller = allow("vanpool.audit.run", Role.REVIEWER),
    ) -> dict[str, Any]:
        strategy = (req or AuditRequest()).strategy
        result = service.run_audit(strategy, vanpool_id, d, run_config(d, caller))
        return result.model_dump(mode="json")

    @r.get("/vanpools/{vanpool_id}/audit/events")
    def audit_events(
        vanpool_id: str,
        d: VanpoolDeps = Depends(deps),
        caller: Caller = allow("vanpool.audit.run", Role.REVIEWER),
    ) -> Any:
        """The Case Manager agent's audit of one vanpool, streamed as server-sent events."""
        # an unknown vanpool is a 404 before the stream starts
        return sse_response(service.audit_events(d, vanpool_id, run_config(d, caller)))


def _case_routes(r: APIRouter, deps: Deps, run_config: ConfigFor) -> None:
    """List and read cases; answer a case's reply."""

    @r.get("/cases")
    def cases(
        status: str | None = None,
        d: VanpoolDeps = Depends(deps),
        _: Caller = allow("vanpool.cases.list", Role.REVIEWER),
    ) -> list[dict[str, Any]]:
        return [_case(c) for c in d.repo.list_cases(status)]

    @r.get("/cases/{case_id}")
    def case(
        case_id: str,
        d: VanpoolDeps = Depends(deps),
        _: Caller = allow("vanpool.case.read", Role.REVIEWER),
    ) -> dict[str, Any]:
        return service.case_detail(d, case_id)

    @r.post("/cases/{case_id}/replies")
    def reply(
        case_id: str,
        req: ReplyRequest,
        d: VanpoolDeps = Depends(deps),
        caller: Caller = allow("vanpool.case.reply", Role.REVIEWER),
    ) -> dict[str, Any]:
        result = service.reply_to_case(d, case_id, req.text, req.strategy, run_config(d, caller))
        return result.model_dump(mode="json")


def _approval_routes(r: APIRouter, deps: Deps, run_config: ConfigFor) -> None:
    """The approvals waiting for a person, a person's decision, and moving time on."""

    @r.get("/approvals")
    def approvals(
        d: VanpoolDeps = Depends(deps), _: Caller = allow("vanpool.approvals.list", Role.REVIEWER)
    ) -> list[dict[str, Any]]:
        return service.pending_approvals(d)

    @r.post("/approvals/{case_id}")
    def decide(
        case_id: str,
        req: ApprovalRequest,
        d: VanpoolDeps = Depends(deps),
        caller: Caller = allow("vanpool.approval.decide", Role.REVIEWER),
    ) -> dict[str, Any]:
        """Resume the case's paused action (the same call as `casework vanpool approve`)."""
        c = service.decide_approval(
            d,
            check_id("CASE", case_id),
            req.decision,
            req.body,
            actor=caller.name,
            config=run_config(d, caller),
        )
        return _case(c)

    @r.post("/tick")
    def tick(
        req: TickRequest | None = None,
        d: VanpoolDeps = Depends(deps),
        caller: Caller = allow("vanpool.time.tick", Role.REVIEWER),
    ) -> dict[str, Any]:
        req = req or TickRequest()
        at = d.at(req.now) if req.now is not None else d
        return service.tick(at, req.strategy, config=run_config(d, caller))
