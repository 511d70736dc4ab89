"""Strategies: ``run(input, deps) -> Decision`` per task, registered by name.

``STRATEGIES`` audits a vanpool (the Case Manager's job, the whole lifecycle's entry):
``rules`` (alias ``baseline``) is the rules-only auditor, ``agent`` the Case Manager agent.
The per-specialist registries serve the evaluation datasets (shift, location, outreach).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from casework.apps.vanpool import agent, checks, lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import (
    Bucket,
    CaseManagerResult,
    LocationDecision,
    OutreachResult,
    ShiftDecision,
    check_id,
)
from casework.apps.vanpool.rules import classify_reply_keywords
from casework.errors import InputError
from casework.runtime import EndReason, RunInfo, Strategy

__all__ = [
    "LOCATION_STRATEGIES",
    "OUTREACH_STRATEGIES",
    "SHIFT_STRATEGIES",
    "STRATEGIES",
    "AuditInput",
    "ReplyInput",
    "ShiftInput",
    "handle_reply",
    "reply_to_case",
]


@dataclass(frozen=True)
class AuditInput:
    vanpool_id: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "vanpool_id", check_id("VP", self.vanpool_id))


@dataclass(frozen=True)
class ShiftInput:
    employee_ids: tuple[str, ...]
    on: date | None = None
    vanpool_id: str | None = None


@dataclass(frozen=True)
class ReplyInput:
    reply: str


def _rules_info() -> RunInfo:
    return RunInfo(ended_by=EndReason.RULES, strategy="rules")


def rules_audit(input: AuditInput, deps: VanpoolDeps) -> CaseManagerResult:
    result, _ = lifecycle.audit_vanpool(deps, input.vanpool_id)
    return result.model_copy(update={"run": _rules_info()})


def agent_audit(input: AuditInput, deps: VanpoolDeps) -> CaseManagerResult:
    return agent.run_case_manager(deps, input.vanpool_id)


def rules_location(input: AuditInput, deps: VanpoolDeps) -> LocationDecision:
    return checks.location_check(deps, deps.repo.get_vanpool(input.vanpool_id))


def agent_location(input: AuditInput, deps: VanpoolDeps) -> LocationDecision:
    return agent.run_location_specialist(deps, input.vanpool_id)


def rules_shift(input: ShiftInput, deps: VanpoolDeps) -> ShiftDecision:
    employees = [deps.repo.get_employee(check_id("EMP", e)) for e in input.employee_ids]
    vanpool = deps.repo.get_vanpool(input.vanpool_id) if input.vanpool_id else None
    return checks.shift_check(employees, input.on or deps.now().date(), vanpool)


def agent_shift(input: ShiftInput, deps: VanpoolDeps) -> ShiftDecision:
    ids = [check_id("EMP", e) for e in input.employee_ids]
    return agent.run_shift_specialist(deps, ids, input.vanpool_id, input.on)


def _bucket_result(bucket: str, run: RunInfo) -> OutreachResult:
    b = Bucket(bucket)
    return OutreachResult(
        verdict="none",
        reasoning=f"Classified as {b.value}.",
        bucket=b,
        hitl_required=b is Bucket.ESCALATION,
        run=run,
    )


def rules_classify(input: ReplyInput, deps: VanpoolDeps) -> OutreachResult:
    return _bucket_result(classify_reply_keywords(input.reply), _rules_info())


def agent_classify(input: ReplyInput, deps: VanpoolDeps) -> OutreachResult:
    bucket = agent.classify_with_model(deps, input.reply)
    run = RunInfo(
        ended_by=EndReason.SUBMIT,
        strategy="agent",
        model=deps.settings.models.for_role(agent.ROLES["classify_reply"]),
    )
    return _bucket_result(bucket, run)


STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_audit,
    "baseline": rules_audit,
    "agent": agent_audit,
}
LOCATION_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_location,
    "baseline": rules_location,
    "agent": agent_location,
}
SHIFT_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_shift,
    "baseline": rules_shift,
    "agent": agent_shift,
}
OUTREACH_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_classify,
    "baseline": rules_classify,
    "agent": agent_classify,
}


def handle_reply(deps: VanpoolDeps, message_id: str, strategy: str = "rules") -> CaseManagerResult:
    """Classify and route one filed reply: keyword rules, or the Outreach Agent."""
    if strategy == "agent":
        return agent.agent_process_reply(deps, message_id)
    body = deps.repo.get_message(message_id).body
    return lifecycle.process_reply(
        deps,
        message_id,
        classify_reply_keywords(body),
        lifecycle.rules_verify,
        lifecycle.RULES_ACTOR,
    )


def reply_to_case(
    deps: VanpoolDeps, case_id: str, text: str, strategy: str = "rules"
) -> CaseManagerResult:
    """File a rider's reply into the case's thread (as if it came by email) and handle it."""
    if not text.strip():
        raise InputError("The reply is empty.")
    case = deps.repo.get_case(check_id("CASE", case_id))
    if not case.thread_id:
        raise InputError(f"Case {case.case_id} has no email thread yet.")
    info = deps.repo.thread_info(case.thread_id)
    message_id = deps.repo.add_message(
        case.thread_id,
        direction="inbound",
        status="received",
        sender=", ".join(info["recipients"]),
        recipients=[deps.app.sender],
        subject=f"Re: {info['subject']}",
        body=text,
        now=deps.now(),
    )
    return handle_reply(deps, message_id, strategy)
