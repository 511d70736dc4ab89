"""A case's whole life as an evaluation case: the audit, then what riders and reviewers do.

A scenario names a vanpool and the events after its audit, each on a day counted from the
audit: a rider's reply (filed into the case's thread and handled as if it came by email), a
portal fix (the rider's home moved near the pickup), the reply timeout passing (the case is
re-audited if it is due, as ``tick`` would), and a reviewer's decision on the pending
approval. Events need a case; when the audit opened none (verified) they do not happen.

Its result carries the spec's business figures: hours from the case's creation to its
resolution, and the memberships it cancelled, which ``evaluation.false_cancel_rate`` checks
against the planted truth (a cancellation the truth does not support would be reversed).
Only the scenario's own case is touched, so scenarios of different vanpools share a store.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import CaseManagerResult, check_id
from casework.apps.vanpool.rules import zip_coordinates
from casework.errors import InputError

__all__ = ["Event", "LifecycleResult", "Scenario", "run_scenario"]


class Event(BaseModel):
    """One thing that happens ``day`` days after the audit (exactly one of the others)."""

    day: float = Field(ge=0)
    reply: str | None = None
    """A rider's reply to the case's thread."""
    moves_near_pickup: str | None = None
    """EMP id of a rider who updates the portal with a home at the vanpool's pickup ZIP."""
    timeout: bool = False
    """The reply timeout is checked: the case is re-audited when it is due."""
    review: Literal["approve", "reject"] | None = None
    """A person decides the case's pending approval (a drafted reply or a cancellation)."""

    @model_validator(mode="after")
    def _one_kind(self) -> Event:
        kinds = [self.reply is not None, self.moves_near_pickup is not None, self.timeout]
        kinds.append(self.review is not None)
        if sum(kinds) != 1:
            raise ValueError("an event is exactly one of reply, moves_near_pickup, timeout, review")
        return self


@dataclass(frozen=True)
class Scenario:
    vanpool_id: str
    events: tuple[Event, ...] = ()

    @classmethod
    def from_inputs(cls, inputs: dict[str, Any]) -> Scenario:
        try:
            events = tuple(Event.model_validate(e) for e in inputs.get("events") or [])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "event"
            raise InputError(f"A scenario event is malformed ({where}: {first['msg']}).") from None
        if any(b.day < a.day for a, b in itertools.pairwise(events)):
            raise InputError("A scenario's events must be in day order.")
        return cls(check_id("VP", str(inputs["vanpool_id"])), events)


class LifecycleResult(CaseManagerResult):
    """Where the case ended after the scenario, with the business figures."""

    resolution_hours: float | None = None
    """Hours from the case's creation to its resolution (None: no case, or still open)."""
    cancelled_employees: list[str] = Field(default_factory=list)
    last_email: str | None = None
    """The last email sent or drafted to the riders (what the judge rates for tone)."""


def _apply(deps: VanpoolDeps, case_id: str, event: Event, strategy: str) -> None:
    from casework.apps.vanpool.agent import agent_verify
    from casework.apps.vanpool.strategies import reply_to_case

    case = deps.repo.get_case(case_id)
    if event.reply is not None:
        reply_to_case(deps, case_id, event.reply, strategy)
    elif event.moves_near_pickup is not None:
        eid = check_id("EMP", event.moves_near_pickup)
        zip_code = deps.repo.get_vanpool(case.vanpool_id).pickup_zip
        home = zip_coordinates(zip_code)
        deps.repo.update_employee(
            eid, deps.now(), home_zip=zip_code, home_lat=home.lat, home_lng=home.lng
        )
    elif event.timeout:
        if case.status == "pending_reply" and case.due_at and case.due_at <= deps.now():
            verify = agent_verify if strategy == "agent" else lifecycle.rules_verify
            actor = "case_manager_agent" if strategy == "agent" else lifecycle.RULES_ACTOR
            lifecycle.reaudit(deps, case_id, verify, actor, trigger="timeout")
    elif event.review is not None and case.meta.get("approval") and case.status != "closed":
        lifecycle.decide_approval(deps, case_id, event.review)


def run_scenario(scenario: Scenario, deps: VanpoolDeps, strategy: str) -> LifecycleResult:
    """Audit the vanpool with ``strategy``, then play the events on its case."""
    from casework.apps.vanpool.strategies import run_audit

    start = deps.now()
    audited = run_audit(strategy, scenario.vanpool_id, deps)
    if audited.case_id is None:
        return LifecycleResult.model_validate(audited.model_dump()).model_copy(
            update={"run": audited.run}
        )
    for event in scenario.events:
        _apply(deps.at(start + timedelta(days=event.day)), audited.case_id, event, strategy)
    case = deps.repo.get_case(audited.case_id)
    cancelled = sorted(
        {
            e
            for entry in deps.repo.audit_log(case_id=case.case_id)
            if entry["action"] == "membership_cancelled"
            for e in entry["detail"]["employee_ids"]
        }
    )
    hours = (
        round((case.resolved_at - case.created_at).total_seconds() / 3600, 2)
        if case.resolved_at
        else None
    )
    outbound = [m for m in deps.repo.messages(case.thread_id or "") if m.direction == "outbound"]
    final = lifecycle.case_result(case, reasoning=case.meta.get("details", ""))
    return LifecycleResult.model_validate(
        {
            **final.model_dump(),
            "resolution_hours": hours,
            "cancelled_employees": cancelled,
            "last_email": outbound[-1].body[:1500] if outbound else None,
        }
    ).model_copy(update={"run": audited.run})
