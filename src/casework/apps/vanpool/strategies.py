"""Strategies: ``run(input, deps) -> Decision`` per task, registered by name.

``STRATEGIES`` audits a vanpool (the Case Manager's job, the whole lifecycle's entry):
``rules`` (alias ``baseline``) is the rules-only auditor, ``agent`` the Case Manager agent.
The per-specialist registries serve the evaluation datasets (shift, location, outreach).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from casework.apps.vanpool import agent, cascade, checks, lifecycle
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.models import (
    Bucket,
    CaseManagerResult,
    LocationDecision,
    OutreachResult,
    ShiftDecision,
    check_id,
)
from casework.apps.vanpool.rules import classify_reply_keywords
from casework.apps.vanpool.settings import VanpoolSettings
from casework.config import Settings
from casework.errors import CaseworkError, InputError
from casework.runtime import EndReason, RunInfo, Strategy
from casework.runtime.batch import BatchConfig, BatchResult, run_batch
from casework.runtime.usage import UsageCallback

__all__ = [
    "LOCATION_STRATEGIES",
    "OUTREACH_STRATEGIES",
    "SHIFT_STRATEGIES",
    "STRATEGIES",
    "AuditInput",
    "ReplyInput",
    "ShiftInput",
    "VanpoolAuditor",
    "audit_many",
    "audit_row",
    "handle_reply",
    "reply_to_case",
    "run_audit",
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


def run_audit(strategy: str, vanpool_id: str, deps: VanpoolDeps) -> CaseManagerResult:
    """One vanpool's audit with a strategy by name (``STRATEGIES``, typed)."""
    audit = agent_audit if strategy == "agent" else rules_audit
    return audit(AuditInput(vanpool_id), deps)


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
    """The cue words' bucket: confidence 90 when a cue named it, 40 for the unclear default."""
    return cascade.rules_reply(input.reply)


def choice_classify(input: ReplyInput, deps: VanpoolDeps) -> OutreachResult:
    """The bundled model chooses the bucket among the four (scored; the escalation guard)."""
    return cascade.choice_classify(input.reply, deps)


def agent_classify(input: ReplyInput, deps: VanpoolDeps) -> OutreachResult:
    counter = UsageCallback()
    bucket = agent.classify_with_model(deps, input.reply, callbacks=[counter])
    run = RunInfo(
        ended_by=EndReason.SUBMIT,
        strategy="agent",
        model=deps.settings.models.for_role(agent.ROLES["classify_reply"]),
        usage=counter.usage,
    )
    return _bucket_result(bucket, run)


STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_audit,
    "baseline": rules_audit,
    "agent": agent_audit,
    "cascade": cascade.audit_cascade(
        "case-manager", rules_audit, agent_audit, CaseManagerResult, agent.ROLES["case_manager"]
    ),
}
LOCATION_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_location,
    "baseline": rules_location,
    "agent": agent_location,
    "cascade": cascade.audit_cascade(
        "location",
        rules_location,
        agent_location,
        LocationDecision,
        agent.ROLES["location_specialist"],
    ),
}
SHIFT_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_shift,
    "baseline": rules_shift,
    "agent": agent_shift,
    "cascade": cascade.audit_cascade(
        "shift", rules_shift, agent_shift, ShiftDecision, agent.ROLES["shift_specialist"]
    ),
}
OUTREACH_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_classify,
    "baseline": rules_classify,
    "choice": choice_classify,
    "agent": agent_classify,
    "cascade": cascade.outreach_cascade(
        rules_classify, choice_classify, agent_classify, agent.ROLES["classify_reply"]
    ),
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


# ---------------------------------------------------------------------------- many audits
def audit_row(vanpool_id: str, r: CaseManagerResult) -> dict[str, Any]:
    """One audit as a summary row (plain data: it travels back from a Ray worker)."""
    email = "-"
    if r.outreach is not None and r.outreach.message_id:
        email = "sent" if r.outreach.sent else r.outreach.verdict
    usage = r.run.usage if r.run is not None else None
    return {
        "vanpool_id": vanpool_id,
        "verdict": r.verdict,
        "failed_checks": list(r.failed_checks),
        "case_id": r.case_id,
        "email": email,
        "reasoning": r.reasoning,
        "model_calls": getattr(usage, "model_calls", 0) if usage is not None else 0,
    }


def _error_row(vanpool_id: str, error: BaseException) -> dict[str, Any]:
    if isinstance(error, CaseworkError):
        sentence = str(error)
    else:  # a bug or a lost worker: its first line, so the batch report stays one row each
        first = (str(error).strip().splitlines() or [""])[0]
        sentence = f"{type(error).__name__}: {first}".rstrip(": ")
    return {
        "vanpool_id": vanpool_id,
        "verdict": "error",
        "failed_checks": [],
        "case_id": None,
        "email": "-",
        "reasoning": sentence,
        "model_calls": 0,
    }


_deps_lock = threading.Lock()


@dataclass
class VanpoolAuditor:
    """``run_batch``'s function for ``vanpool audit --all``: a vanpool id -> its summary row.

    It pickles as its settings alone, so a Ray worker builds its own deps (store, mailer,
    models) on its first vanpool and keeps them for the rest; locally the caller's deps are
    shared by the worker threads."""

    strategy: str
    settings: Settings
    app: VanpoolSettings
    deps: VanpoolDeps | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "deps": None}

    def _ready(self) -> VanpoolDeps:
        with _deps_lock:
            if self.deps is None:
                self.deps = build_deps(self.settings, app=self.app)
            return self.deps

    def __call__(self, vanpool_id: str) -> dict[str, Any]:
        return audit_row(vanpool_id, run_audit(self.strategy, vanpool_id, self._ready()))


def audit_many(
    deps: VanpoolDeps,
    vanpool_ids: Sequence[str],
    strategy: str,
    config: BatchConfig,
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Audit every vanpool once through the platform's batch seam (``local`` threads or
    ``ray``); one row per vanpool in the order given. A vanpool whose audit fails is an
    ``error`` row with its one sentence, and the others go on."""
    ids = list(dict.fromkeys(vanpool_ids))  # a vanpool named twice is audited once
    auditor = VanpoolAuditor(strategy, deps.settings, deps.app, deps)

    def row(item: BatchResult[dict[str, Any]]) -> dict[str, Any]:
        if item.value is not None:
            return item.value
        return _error_row(str(item.key), item.error or RuntimeError("no result"))

    def done(item: BatchResult[dict[str, Any]]) -> None:
        if on_done is not None:
            on_done(row(item))

    results = run_batch(ids, auditor, replace(config, progress=done), key=lambda v: v)
    return [row(r) for r in results]
