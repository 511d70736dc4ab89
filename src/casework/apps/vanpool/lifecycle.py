"""The case lifecycle of the spec, as plain functions over deps (no model decides here).

verification -> all pass: VERIFIED (no case) | any fail: one case per vanpool (``upsert_case``)
-> outreach email -> ``pending_reply`` (due in one week). Replies route by bucket
(``reply_routing``). A timeout re-audits for a
silent fix (pass -> closed). Every failed re-audit counts; the third one sends the case to
``pre_cancel``, where ``cancel_membership`` waits for a person's approval. Reading of the spec:
a failed re-audit before the third sends a reminder and waits again, so "silent timeout x3
-> pre-cancel" and "at most 3 re-audits" both hold.

Who verifies is a parameter (``verification.Verifier``): the rules auditor or the specialist agents; the
Case Manager agent's tools call these same functions, so both run one lifecycle. Side effects
behind an approval (sending a reviewed draft, removing riders) go through the side-effect
journal, so a repeated or resumed approval never repeats them.

Orchestration sits above, in ``service``: which verifier a strategy uses, ``tick``, the
approvals a person decides (resuming the Case Manager's paused run first), scenarios.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from casework.apps.vanpool import mail
from casework.apps.vanpool.case_email import case_thread, email_values, send_email, template_key
from casework.apps.vanpool.models import (
    Bucket,
    CaseManagerResult,
    CaseStatus,
    CaseView,
    Outcome,
    OutreachResult,
    Reason,
)
from casework.apps.vanpool.verification import (
    CHECKS,
    RULES_ACTOR,
    Verification,
    Verifier,
    rules_verify,
)
from casework.errors import InputError
from casework.runtime.prompts import load_prompt

if TYPE_CHECKING:
    from casework.apps.vanpool.deps import VanpoolDeps

__all__ = [
    "REVIEWER",
    "audit_vanpool",
    "cancel_membership",
    "case_result",
    "close_case",
    "decide_cancel",
    "decide_draft",
    "draft_for_review",
    "reaudit",
    "request_cancel",
    "start_outreach",
    "upsert_case",
    "wait_for_reply",
]

APP_PACKAGE = "casework.apps.vanpool"
"""Where ``load_prompt`` finds the ``prompts/*.md`` files."""

REVIEWER = "reviewer"


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
    wait_for_reply(deps, case_id, actor, template=key)
    return result


def wait_for_reply(deps: VanpoolDeps, case_id: str, actor: str, **meta: Any) -> CaseView:
    """The case waits for the rider again, due in ``reply_timeout_days``."""
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
        return wait_for_reply(deps, case_id, actor)
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
    return wait_for_reply(deps, case_id, actor)


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
        return wait_for_reply(deps, case_id, actor, approval=None)
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
    return wait_for_reply(deps, case_id, actor, approval=None)
