"""Vanpool domain models: ids, statuses, roster views, and the agents' decision models."""

from __future__ import annotations

import math
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from casework.errors import InputError
from casework.runtime import Decision

__all__ = [
    "ID_PATTERNS",
    "ROLES",
    "ApprovalRequest",
    "ApprovalSettled",
    "Bucket",
    "CaseManagerResult",
    "CaseStatus",
    "CaseView",
    "Employee",
    "ImportReport",
    "LocationDecision",
    "MessageView",
    "Outcome",
    "OutreachResult",
    "Reason",
    "RosterRefused",
    "RowProblem",
    "ShiftDecision",
    "Vanpool",
    "check_id",
    "new_id",
    "spec_confidence",
]

ROLES = {
    "case_manager": "orchestrator",
    "location_specialist": "specialist",
    "shift_specialist": "specialist",
    "outreach_agent": "outreach",
    "classify_reply": "classifier",
}
"""The model role each agent asks the run config's models for, the Case Manager's first."""

ID_PATTERNS = {
    "EMP": r"EMP-\d{4}",
    "VP": r"VP-\d{3}",
    "CASE": r"CASE-[0-9A-F]{8}",
    "THREAD": r"THREAD-[0-9A-F]{8}",
    "MSG": r"MSG-[0-9A-F]{8}",
}
_EXAMPLES = {
    "EMP": "EMP-1001",
    "VP": "VP-101",
    "CASE": "CASE-A3F8B291",
    "THREAD": "THREAD-A3F8B291",
    "MSG": "MSG-12345678",
}


def new_id(prefix: Literal["CASE", "THREAD", "MSG"]) -> str:
    """``PREFIX-{8 hex}``, upper case as the spec writes them."""
    return f"{prefix}-{secrets.token_hex(4).upper()}"


def check_id(kind: str, value: str) -> str:
    """Normalise an id a user typed; a malformed one is an ``InputError`` naming the form."""
    v = value.strip().upper()
    if not re.fullmatch(ID_PATTERNS[kind], v):
        raise InputError(f"{value!r} is not a {kind} id (for example {_EXAMPLES[kind]}).")
    return v


class CaseStatus(StrEnum):
    OPEN = "open"
    """Created by upsert_case, outreach not yet sent."""
    PENDING_REPLY = "pending_reply"
    """Outreach sent (or queued); waiting for a reply or the one-week timeout."""
    HITL_REVIEW = "hitl_review"
    """A drafted reply or a cancellation waits for a person."""
    REAUDIT = "reaudit"
    PRE_CANCEL = "pre_cancel"
    """Re-audit failed after a timeout or 3 re-audits: cancel_membership awaits approval."""
    CLOSED = "closed"


class Outcome(StrEnum):
    RESOLVED = "resolved"
    CANCELLED = "cancelled"


class Reason(StrEnum):
    SHIFT = "shift_mismatch"
    LOCATION = "location_mismatch"
    UNKNOWN = "unknown"


class Bucket(StrEnum):
    ACKNOWLEDGMENT = "acknowledgment"
    QUESTION = "question"
    UPDATE = "update"
    ESCALATION = "escalation"


# ---------------------------------------------------------------------------- roster views
@dataclass(frozen=True)
class Employee:
    employee_id: str
    name: str
    email: str
    home_zip: str
    home_lat: float
    home_lng: float
    site: str
    shift_id: str | None
    """None for an employee who rides no vanpool and whose export left the shift blank."""
    shift_name: str | None
    shift_spec: str | None
    timezone: str | None
    pto: str = ""


@dataclass(frozen=True)
class Vanpool:
    vanpool_id: str
    work_site: str
    pickup_zip: str
    pickup_lat: float
    pickup_lng: float
    departure_time: str
    return_time: str
    timezone: str
    max_commute_miles: float
    riders: list[Employee] = field(default_factory=list)


@dataclass(frozen=True)
class RowProblem:
    """One refused value of a roster file: where it is, what it holds, what to write instead."""

    row: int
    """The row a person finds it on: a spreadsheet's row number (the header is row 1) for a
    CSV file, the item's position (from 1) for a JSON list."""
    employee_id: str
    column: str
    value: str
    problem: str
    """One sentence: what is wrong and what to write instead."""

    def sentence(self) -> str:
        who = f" ({self.employee_id})" if self.employee_id else ""
        shown = repr(self.value) if self.value else "empty"
        return f"Row {self.row}{who}, {self.column} {shown}: {self.problem}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "employee_id": self.employee_id or None,
            "column": self.column,
            "value": self.value,
            "problem": self.problem,
        }


class RosterRefused(InputError):
    """A roster file with refused rows: every problem of every row, found in one pass; nothing
    of the file was written."""

    def __init__(self, source: str, rows: int, problems: list[RowProblem]) -> None:
        self.source = source
        self.rows = rows
        self.problems = problems
        refused = len({p.row for p in problems})
        head = (
            f"{source}: {refused} of {rows} rows refused ({len(problems)} problems); nothing "
            "was written. Fix these and import the file again:"
        )
        super().__init__("\n".join([head, *(f"  {p.sentence()}" for p in problems)]))


@dataclass(frozen=True)
class ImportReport:
    """What ``vanpool import`` did with a file (or, with ``dry_run``, would do)."""

    file: str
    dry_run: bool
    rows: int
    """Rows read, blank rows left out."""
    blank_rows: int
    in_file: dict[str, int]
    """Employees, vanpools, riders and distinct shifts the file holds."""
    added: dict[str, int]
    """Of those, the ones the store did not have (what was, or would be, added)."""
    repaired: dict[str, int] = field(default_factory=dict)
    """Values read in a form the store does not keep, counted by kind (ZIP+4, dropped leading
    zeros, 12-hour or H:MM times, timezone aliases), each rewritten to its canonical form."""


@dataclass(frozen=True)
class MessageView:
    message_id: str
    thread_id: str
    direction: str
    status: str
    sender: str
    recipients: list[str]
    subject: str
    body: str
    bucket: str | None
    attempts: int
    last_error: str | None
    created_at: datetime
    sent_at: datetime | None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseView:
    case_id: str
    vanpool_id: str
    status: str
    meta: dict[str, Any]
    outcome: str | None
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None
    due_at: datetime | None
    thread_id: str | None = None

    @property
    def failed_checks(self) -> list[str]:
        return list(self.meta.get("failed_checks", []))

    @property
    def reaudits(self) -> int:
        return int(self.meta.get("reaudits", 0))


@dataclass(frozen=True)
class ApprovalRequest:
    """One ``approval_requested`` row of a case's audit log: what waits for a person."""

    id: int
    at: datetime
    case_id: str
    vanpool_id: str
    approval: dict[str, Any]
    """The case's pending approval when it was requested (``action``, ``allowed``, ...)."""
    draft_body: str = ""
    """For a drafted reply: the draft's text."""


@dataclass(frozen=True)
class ApprovalSettled:
    """How a request was settled: the first decision row after it, and who decided."""

    action: str
    detail: dict[str, Any]
    decided_by: str
    decided_at: datetime


# ---------------------------------------------------------------------------- decisions
def spec_confidence(confidence: float) -> int:
    """The platform's 0-100 confidence on the spec's 1-5 scale (20 points a step)."""
    return min(5, max(1, math.ceil(confidence / 20)))


class _SpecialistDecision(Decision):
    verdict: Literal["pass", "fail", "NEEDS_REVIEW"] = Field(
        description="pass when every rider meets the rule, fail when any does not."
    )

    def spec_output(self) -> dict[str, Any]:
        """The spec's contract: verdict, confidence 1-5, reasoning, evidence with citations."""
        return {
            "verdict": self.verdict,
            "confidence": spec_confidence(self.confidence),
            "reasoning": self.reasoning,
            "evidence": [{**e.fields, "type": e.source, "ref": e.ref} for e in self.evidence],
        }


class LocationDecision(_SpecialistDecision):
    """The Location Specialist's verdict on whether riders live within the commute radius."""

    failed_employees: list[str] = Field(
        default_factory=list, description="Employee ids (EMP-####) that fail the distance rule."
    )


class ShiftDecision(_SpecialistDecision):
    """The Shift Specialist's verdict on whether the riders' shifts are compatible."""

    failed_employees: list[str] = Field(
        default_factory=list, description="Employee ids (EMP-####) whose shift conflicts."
    )


class OutreachResult(Decision):
    """What the Outreach Agent did with a case's email thread."""

    verdict: Literal["sent", "queued", "draft", "none", "NEEDS_REVIEW"] = Field(
        default="none", description="sent, queued (SMTP retry), draft (awaiting review) or none."
    )
    confidence: float = Field(default=100, ge=0, le=100)
    reasoning: str = Field(default="", max_length=1200)
    email_thread_id: str | None = None
    message_id: str | None = None
    """The outbound message, or None when nothing was sent or drafted."""
    bucket: Bucket | None = None
    """The inbound reply's bucket, or None when there was no reply to classify."""
    hitl_required: bool = False
    sent: bool = False
    """False for drafts awaiting review and for messages still queued for SMTP retry."""


class CaseManagerResult(Decision):
    """The Case Manager's outcome for one vanpool audit or case step."""

    verdict: Literal[
        "verified", "pending_reply", "hitl_review", "pre_cancel", "closed", "NEEDS_REVIEW"
    ] = Field(description="Where the case stands after this step.")
    case_id: str | None = None
    failed_checks: list[Literal["location", "shift"]] = Field(default_factory=list)
    outcome: Outcome | None = None
    reaudits: int = 0
    """Failed re-audits so far (the third sends the case to pre_cancel)."""
    outreach: OutreachResult | None = None
