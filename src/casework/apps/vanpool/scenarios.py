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
The scenarios are played by ``service.run_scenario``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from casework.apps.vanpool.models import CaseManagerResult, check_id
from casework.errors import InputError

__all__ = ["Event", "LifecycleResult", "Scenario"]


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
