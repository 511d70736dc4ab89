"""The case lifecycle of the spec, as plain functions over deps (no model decides here).

verification -> all pass: VERIFIED (no case) | any fail: one case per vanpool (``upsert_case``)
-> outreach email -> ``pending_reply`` (due in one week). Replies route by bucket:
acknowledgment -> confirm, close ``resolved``; question -> answer, keep waiting; update ->
point to the portal and re-audit (pass -> closed, data fixed; fail -> back to outreach);
escalation -> the drafted reply waits for a person (``hitl_review``). A timeout re-audits for a
silent fix (pass -> closed). Every failed re-audit counts; the third one sends the case to
``pre_cancel``, where ``cancel_membership`` waits for a person's approval. Reading of the spec:
a failed re-audit before the third sends a reminder and waits again, so "silent timeout x3
-> pre-cancel" and "at most 3 re-audits" both hold.

Who verifies is a parameter (``Verifier``): the rules auditor or the specialist agents; the
Case Manager agent's tools call these same functions, so both run one lifecycle. Side effects
behind an approval (sending a reviewed draft, removing riders) go through the side-effect
journal, so a repeated or resumed approval never repeats them.

Orchestration sits above, in ``service``: which verifier a strategy uses, ``tick``, the
approvals a person decides (resuming the Case Manager's paused run first), scenarios.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from casework.apps.vanpool import mail
from casework.apps.vanpool.case_email import case_thread, email_values, send_email, template_key
from casework.apps.vanpool.checks import location_check, shift_check
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import (
    Bucket,
    CaseManagerResult,
    CaseStatus,
    CaseView,
    LocationDecision,
    Outcome,
    OutreachResult,
    Reason,
    ShiftDecision,
)
from casework.errors import InputError
from casework.runtime.prompts import load_prompt

__all__ = [
    "REVIEWER",
    "RULES_ACTOR",
    "Verification",
    "Verifier",
    "audit_vanpool",
    "cancel_membership",
    "case_result",
    "close_case",
    "decide_cancel",
    "decide_draft",
    "draft_for_review",
    "process_reply",
    "reaudit",
    "rules_verify",
    "start_outreach",
    "upsert_case",
]

APP_PACKAGE = "casework.apps.vanpool"
"""Where ``load_prompt`` finds the ``prompts/*.md`` files."""

RULES_ACTOR = "rules_auditor"
REVIEWER = "reviewer"
CHECKS = ("location", "shift")


@dataclass(frozen=True)
class Verification:
    location: LocationDecision | None
    shift: ShiftDecision | None

    @property
    def failed_checks(self) -> list[str]:
        return [
            name
            for name, d in (("location", self.location), ("shift", self.shift))
            if d is not None and d.verdict == "fail"
        ]

    @property
    def undecided(self) -> list[str]:
        """Checks whose specialist ended without a verdict (a limit, an unusable model)."""
        return [
            name
            for name, d in (("location", self.location), ("shift", self.shift))
            if d is not None and d.verdict not in ("pass", "fail")
        ]

    @property
    def failed_employees(self) -> dict[str, list[str]]:
        return {
            "location": list(self.location.failed_employees) if self.location else [],
            "shift": list(self.shift.failed_employees) if self.shift else [],
        }

    @property
    def evidence(self) -> list[dict[str, Any]]:
        """The failed checks' evidence about failing riders (and the vanpool), with citations."""
        failing = {e for ids in self.failed_employees.values() for e in ids}
        out = []
        for d in (self.location, self.shift):
            if d is None or d.verdict == "pass":
                continue
            for e in d.evidence:
                if not e.ref.startswith("EMP-") or e.ref in failing:
                    out.append({**e.fields, "type": e.source, "ref": e.ref})
        return out

    @property
    def details(self) -> str:
        parts = []
        for d in (self.location, self.shift):
            if d is not None and d.verdict != "pass":
                parts.append(d.reasoning)
        return " ".join(parts)


Verifier = Callable[[VanpoolDeps, str, Sequence[str]], Verification]
"""``verify(deps, vanpool_id, checks)``: run the named checks on the vanpool's riders."""


def rules_verify(
    deps: VanpoolDeps, vanpool_id: str, checks: Sequence[str] = CHECKS
) -> Verification:
    """The rules-only auditor: distance and overlap rules, no model."""
    vanpool = deps.repo.get_vanpool(vanpool_id)
    if not vanpool.riders:
        raise InputError(f"Vanpool {vanpool_id} has no riders to audit.")
    return Verification(
        location=location_check(deps, vanpool) if "location" in checks else None,
        shift=shift_check(vanpool.riders, deps.now().date(), vanpool)
        if "shift" in checks
        else None,
    )


# ---------------------------------------------------------------------------- case steps
def _reason(failed_checks: Sequence[str]) -> str:
    if "location" in failed_checks:
        return Reason.LOCATION.value
    if "shift" in failed_checks:
        return Reason.SHIFT.value
    return Reason.UNKNOWN.value


def upsert_case(
    deps: VanpoolDeps, vanpool_id: str, verification: Verification, actor: str
) -> CaseView:
    """Create the vanpool's case, or update its open one (one case per vanpool)."""
    failed = verification.failed_checks
    meta: dict[str, Any] = {
        "reason": _reason(failed),
        "details": verification.details,
        "failed_checks": failed,
        "failed_employees": verification.failed_employees,
    }
    meta["evidence"] = verification.evidence
    if verification.shift is not None:
        for e in verification.shift.evidence:
            if e.source == "vanpool_majority_shift":
                meta["majority_shift"] = e.fields.get("majority_shift")
    now = deps.now()
    case = deps.repo.open_case_for(vanpool_id)
    if case is None:
        return deps.repo.create_case(
            vanpool_id, {**meta, "opened_by": actor, "reaudits": 0}, now, actor
        )
    return deps.repo.update_case(case.case_id, now, actor, meta=meta)


def start_outreach(deps: VanpoolDeps, case_id: str, actor: str) -> OutreachResult:
    """The initial email (template chosen by failed_checks); the case then waits a week."""
    case = deps.repo.get_case(case_id)
    key = template_key(case.failed_checks)
    body = load_prompt(APP_PACKAGE, f"email_{key}", **email_values(deps, case))
    result = send_email(
        deps, case_id, body, actor, subject=f"Vanpool {case.vanpool_id} membership review"
    )
    _wait_for_reply(deps, case_id, actor, template=key)
    return result


def _wait_for_reply(deps: VanpoolDeps, case_id: str, actor: str, **meta: Any) -> CaseView:
    now = deps.now()
    return deps.repo.update_case(
        case_id,
        now,
        actor,
        status=CaseStatus.PENDING_REPLY.value,
        due_at=now + timedelta(days=deps.app.reply_timeout_days),
        meta=meta or None,
    )


def close_case(
    deps: VanpoolDeps, case_id: str, outcome: str, actor: str, note: str = ""
) -> CaseView:
    if outcome not in (Outcome.RESOLVED, Outcome.CANCELLED):
        raise InputError(f"Outcome {outcome!r} is not 'resolved' or 'cancelled'.")
    case = deps.repo.get_case(case_id)
    if case.status == CaseStatus.CLOSED:
        return case
    return deps.repo.update_case(
        case_id,
        deps.now(),
        actor,
        status=CaseStatus.CLOSED.value,
        outcome=outcome,
        clear_due=True,
        meta={"resolution": note, "approval": None},
        action="case_closed",
    )


def _request_approval(
    deps: VanpoolDeps, case_id: str, status: CaseStatus, approval: dict[str, Any], actor: str
) -> CaseView:
    return deps.repo.update_case(
        case_id,
        deps.now(),
        actor,
        status=status.value,
        clear_due=True,
        meta={"approval": approval},
        action="approval_requested",
    )


def draft_for_review(
    deps: VanpoolDeps, case_id: str, body: str, actor: str, bucket: str = Bucket.ESCALATION
) -> OutreachResult:
    """``send_email_for_review``: save the reply as a draft; the case waits for a person."""
    case = deps.repo.get_case(case_id)
    thread_id = case_thread(deps, case)
    info = deps.repo.thread_info(thread_id)
    msg_id = mail.queue_message(
        deps.repo,
        deps.app,
        thread_id=thread_id,
        recipients=info["recipients"],
        subject=f"Re: {info['subject']}",
        body=body,
        now=deps.now(),
        status="draft",
    )
    _request_approval(
        deps,
        case_id,
        CaseStatus.HITL_REVIEW,
        {
            "action": "send_email_for_review",
            "message_id": msg_id,
            "allowed": ["approve", "edit", "reject"],
        },
        actor,
    )
    return OutreachResult(
        verdict="draft",
        reasoning="Escalation: the drafted reply waits for a person's review.",
        email_thread_id=thread_id,
        message_id=msg_id,
        bucket=Bucket(bucket),
        hitl_required=True,
        sent=False,
    )


def request_cancel(deps: VanpoolDeps, case_id: str, actor: str) -> CaseView:
    """Pre-cancel: ``cancel_membership`` for the failing riders waits for approval."""
    case = deps.repo.get_case(case_id)
    failing = case.meta.get("failed_employees", {})
    employees = sorted({e for ids in failing.values() for e in ids})
    return _request_approval(
        deps,
        case_id,
        CaseStatus.PRE_CANCEL,
        {
            "action": "cancel_membership",
            "vanpool_id": case.vanpool_id,
            "employee_ids": employees,
            "allowed": ["approve", "reject"],
        },
        actor,
    )


def cancel_membership(
    deps: VanpoolDeps, case_id: str, employee_ids: Sequence[str], actor: str
) -> list[str]:
    """Remove the riders from the case's vanpool, each exactly once (journaled); returns the
    riders whose removal is recorded (a repeat returns the recorded answer, removing nobody)."""
    case = deps.repo.get_case(case_id)
    removed = []
    for employee_id in employee_ids:
        key = f"vanpool:{case_id}:cancel_membership:{employee_id}"

        def remove(_key: str, eid: str = employee_id) -> bool:
            return deps.repo.remove_rider(case.vanpool_id, eid, deps.now())

        def already_removed(_key: str, eid: str = employee_id) -> bool | None:
            # After a crash between intent and completion: an ended membership is the effect.
            riders = {e.employee_id for e in deps.repo.get_vanpool(case.vanpool_id).riders}
            return True if eid not in riders else None

        if deps.journal.once(
            key,
            remove,
            reconcile=already_removed,
            thread_id=case_id,
            action="cancel_membership",
            args={"vanpool_id": case.vanpool_id, "employee_id": employee_id},
        ):
            removed.append(employee_id)
    deps.repo.audit(
        deps.now(),
        actor,
        "membership_cancelled",
        case_id=case_id,
        vanpool_id=case.vanpool_id,
        detail={"employee_ids": list(employee_ids), "removed_now": removed},
    )
    return removed


# ---------------------------------------------------------------------------- re-audit
def reaudit(
    deps: VanpoolDeps,
    case_id: str,
    verifier: Verifier,
    actor: str,
    trigger: str,
    checks: Sequence[str] = CHECKS,
) -> CaseView:
    """Re-verify an open case: pass -> closed resolved; fail -> reminder, or pre-cancel after
    the last allowed re-audit."""
    case = deps.repo.get_case(case_id)
    result = verifier(deps, case.vanpool_id, checks)
    if result.undecided:
        # No verdict is no evidence either way: the case waits another period, uncounted.
        deps.repo.audit(
            deps.now(),
            actor,
            "reaudit_undecided",
            case_id=case_id,
            vanpool_id=case.vanpool_id,
            detail={"trigger": trigger, "undecided": result.undecided},
        )
        return _wait_for_reply(deps, case_id, actor)
    count = case.reaudits + 1
    deps.repo.audit(
        deps.now(),
        actor,
        "reaudit",
        case_id=case_id,
        vanpool_id=case.vanpool_id,
        detail={"trigger": trigger, "attempt": count, "failed_checks": result.failed_checks},
    )
    if not result.failed_checks:
        note = "data fixed" if trigger == "update" else "silent fix"
        return close_case(deps, case_id, Outcome.RESOLVED, actor, note)
    case = upsert_case(deps, case.vanpool_id, result, actor)
    deps.repo.update_case(case_id, deps.now(), actor, meta={"reaudits": count})
    if count >= deps.app.max_reaudits:
        return request_cancel(deps, case_id, actor)
    case = deps.repo.get_case(case_id)
    body = load_prompt(
        APP_PACKAGE,
        "email_reminder",
        **email_values(deps, case, attempt=count, max_attempts=deps.app.max_reaudits),
    )
    send_email(deps, case_id, body, actor)
    return _wait_for_reply(deps, case_id, actor)


# ---------------------------------------------------------------------------- replies
def process_reply(
    deps: VanpoolDeps,
    message_id: str,
    bucket: str,
    verifier: Verifier,
    actor: str,
    draft: str | None = None,
) -> CaseManagerResult:
    """Route one classified inbound reply by its bucket (the spec's table), as one transaction:
    the reply marked handled, its audit rows, the case's move and the email queued all land
    together or not at all (a crash leaves the reply ``received`` for the next ``tick``). The
    email goes to SMTP after the commit. A reply that is no longer ``received`` (a tick or
    another worker handled it) is left as it is. ``draft``: the answer's text (the Outreach
    Agent's wording) instead of the bucket's template.
    """
    message = deps.repo.get_message(message_id)
    case_id = deps.repo.thread_case(message.thread_id)
    bucket = Bucket(bucket)
    verified = None
    if bucket is Bucket.UPDATE:
        # Verified before the transaction: an agent's checks take model calls, and the
        # store's write lock is not held across them.
        verified = verifier(deps, deps.repo.get_case(case_id).vanpool_id, CHECKS)
    with deps.repo.transaction():
        if not deps.repo.claim_reply(message_id, bucket.value):
            handled = deps.repo.get_message(message_id)
            return _result(
                deps,
                case_id,
                OutreachResult(
                    email_thread_id=message.thread_id,
                    bucket=Bucket(handled.bucket) if handled.bucket else None,
                    reasoning=f"Reply {message_id} was handled already; nothing more was done.",
                ),
            )
        out = _route_reply(
            deps, message_id, case_id, message.thread_id, bucket, verified, actor, draft
        )
    return _result(deps, case_id, _as_delivered(deps, out))


def _route_reply(
    deps: VanpoolDeps,
    message_id: str,
    case_id: str,
    thread_id: str,
    bucket: Bucket,
    verified: Verification | None,
    actor: str,
    draft: str | None,
) -> OutreachResult:
    """The writes of a claimed reply's handling (inside its transaction)."""
    case = deps.repo.get_case(case_id)
    deps.repo.audit(
        deps.now(),
        actor,
        "reply_classified",
        case_id=case_id,
        vanpool_id=case.vanpool_id,
        detail={"message_id": message_id, "bucket": bucket.value},
    )
    waiting = case.status in (CaseStatus.PENDING_REPLY, CaseStatus.OPEN)
    if not waiting and not (case.status == CaseStatus.PRE_CANCEL and bucket is Bucket.UPDATE):
        # Closed, or a person is already reviewing: the reply is filed for them, nothing else.
        return OutreachResult(email_thread_id=thread_id, bucket=bucket)

    def answer(template: str, **more: Any) -> OutreachResult:
        return send_email(
            deps,
            case_id,
            draft or load_prompt(APP_PACKAGE, template, **email_values(deps, case, **more)),
            actor,
        )

    if bucket is Bucket.ACKNOWLEDGMENT:
        out = answer("email_acknowledgment")
        close_case(deps, case_id, Outcome.RESOLVED, actor, "eligibility confirmed by the rider")
    elif bucket is Bucket.QUESTION:
        out = answer("email_question")
        _wait_for_reply(deps, case_id, actor)
    elif bucket is Bucket.UPDATE:
        result = "We are re-checking now; you will hear from us if anything is still missing."
        out = answer("email_update", result=result)
        assert verified is not None  # verified before the transaction began
        reaudit(deps, case_id, lambda *_: verified, actor, trigger="update")
    else:
        body = draft or load_prompt(APP_PACKAGE, "email_escalation", **email_values(deps, case))
        out = draft_for_review(deps, case_id, body, actor)
    return out.model_copy(update={"bucket": bucket, "hitl_required": bucket is Bucket.ESCALATION})


def _as_delivered(deps: VanpoolDeps, out: OutreachResult) -> OutreachResult:
    """``out`` with its email's state once the handling committed (sent, or still queued)."""
    if out.verdict != "queued" or out.message_id is None:
        return out
    if deps.repo.get_message(out.message_id).status != "sent":
        return out.model_copy(
            update={
                "reasoning": "Queued: the SMTP server did not accept it yet; it will be retried."
            }
        )
    return out.model_copy(
        update={"verdict": "sent", "sent": True, "reasoning": "Accepted by the SMTP server."}
    )


def case_result(case: CaseView, **fields: Any) -> CaseManagerResult:
    """Where a case stands, as the Case Manager's result (``fields`` add reasoning, run, ...)."""
    status = case.status
    data: dict[str, Any] = {
        "verdict": status
        if status in ("pending_reply", "hitl_review", "pre_cancel", "closed")
        else "pending_reply",
        "confidence": 100,
        "reasoning": case.meta.get("details", "") or case.meta.get("resolution", ""),
        "case_id": case.case_id,
        "failed_checks": case.failed_checks,
        "outcome": case.outcome,
        "reaudits": case.reaudits,
    }
    data.update({k: v for k, v in fields.items() if k != "outreach" and k != "run"})
    result = CaseManagerResult.model_validate(data)
    return result.model_copy(update={k: fields[k] for k in ("outreach", "run") if k in fields})


def _result(deps: VanpoolDeps, case_id: str, outreach: OutreachResult | None) -> CaseManagerResult:
    return case_result(deps.repo.get_case(case_id), outreach=outreach)


# ---------------------------------------------------------------------------- audit
def audit_vanpool(
    deps: VanpoolDeps, vanpool_id: str, verifier: Verifier = rules_verify, actor: str = RULES_ACTOR
) -> tuple[CaseManagerResult, Verification]:
    """One audit: verify; all pass -> verified (an open case closes); any fail -> case + outreach."""
    verification = verifier(deps, vanpool_id, CHECKS)
    open_case = deps.repo.open_case_for(vanpool_id)
    if verification.undecided and not verification.failed_checks:
        deps.repo.audit(
            deps.now(),
            actor,
            "audit_undecided",
            vanpool_id=vanpool_id,
            detail={"undecided": verification.undecided},
        )
        reason = f"{vanpool_id}: the {' and '.join(verification.undecided)} check ended without a verdict ({verification.details[:600]}); a person should look."
        return CaseManagerResult(
            verdict="NEEDS_REVIEW", confidence=0, reasoning=reason
        ), verification
    if not verification.failed_checks:
        if open_case is not None:
            close_case(deps, open_case.case_id, Outcome.RESOLVED, actor, "re-audit passed")
            return _result(deps, open_case.case_id, None), verification
        deps.repo.audit(deps.now(), actor, "vanpool_verified", vanpool_id=vanpool_id)
        return (
            CaseManagerResult(
                verdict="verified",
                confidence=100,
                reasoning=f"{vanpool_id}: location and shift checks pass for every rider.",
            ),
            verification,
        )
    case = upsert_case(deps, vanpool_id, verification, actor)
    if open_case is not None and open_case.status != CaseStatus.OPEN:
        return _result(deps, case.case_id, None), verification  # already in its lifecycle
    outreach = start_outreach(deps, case.case_id, actor)
    return _result(deps, case.case_id, outreach), verification


# ---------------------------------------------------------------------------- approval steps
def decide_cancel(
    deps: VanpoolDeps, case_id: str, decision: str, approval: dict[str, Any], actor: str
) -> CaseView:
    """A person's decision on a pending ``cancel_membership``: approve removes the riders
    (journaled) and closes the case cancelled; reject closes it resolved, riders kept."""
    if decision == "approve":
        cancel_membership(deps, case_id, approval["employee_ids"], actor)
        return close_case(
            deps, case_id, Outcome.CANCELLED, actor, "membership cancelled after approval"
        )
    return close_case(deps, case_id, Outcome.RESOLVED, actor, "cancellation rejected by a reviewer")


def decide_draft(
    deps: VanpoolDeps,
    case_id: str,
    decision: str,
    message_id: str,
    body: str | None,
    actor: str,
) -> CaseView:
    """A person's decision on a drafted reply: reject drops it, edit replaces its text, and
    approve / edit send it once (journaled); the case then waits for the rider again."""
    case = deps.repo.get_case(case_id)
    if decision == "reject":
        deps.repo.update_message(message_id, status="rejected")
        deps.repo.audit(
            deps.now(), actor, "draft_rejected", case_id=case_id, vanpool_id=case.vanpool_id
        )
        return _wait_for_reply(deps, case_id, actor, approval=None)
    if decision == "edit":
        deps.repo.update_message(message_id, body=body)

    def send(_key: str) -> bool:
        # The message's own id is its Message-ID: the idempotency key the SMTP side sees.
        deps.repo.update_message(message_id, status="queued", next_attempt_at=deps.now())
        return mail.send_one(deps.repo, deps.app, deps.mailer, message_id, deps.now())

    def already_sent(_key: str) -> bool | None:
        return True if deps.repo.get_message(message_id).status == "sent" else None

    sent = deps.journal.once(
        f"vanpool:{case_id}:send_email_for_review:{message_id}",
        send,
        reconcile=already_sent,
        thread_id=case_id,
        action="send_email_for_review",
        args={"message_id": message_id},
    )
    deps.repo.audit(
        deps.now(),
        actor,
        "draft_approved" if decision == "approve" else "draft_edited",
        case_id=case_id,
        vanpool_id=case.vanpool_id,
        detail={"message_id": message_id, "sent": sent},
    )
    return _wait_for_reply(deps, case_id, actor, approval=None)
