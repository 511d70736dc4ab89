"""A rider's classified reply, routed by its bucket (the spec's table), as one transaction.

acknowledgment -> confirm, close ``resolved``; question -> answer, keep waiting; update ->
point to the portal and re-audit (pass -> closed, data fixed; fail -> back to outreach);
escalation -> the drafted reply waits for a person (``hitl_review``). The case steps are
``lifecycle``'s; who classified the reply and who verifies an update are the caller's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.case_email import email_values, send_email
from casework.apps.vanpool.models import (
    Bucket,
    CaseManagerResult,
    CaseStatus,
    Outcome,
    OutreachResult,
)
from casework.apps.vanpool.verification import CHECKS, Verification, Verifier
from casework.runtime.prompts import load_prompt

if TYPE_CHECKING:
    from casework.apps.vanpool.deps import VanpoolDeps

__all__ = ["process_reply"]

APP_PACKAGE = lifecycle.APP_PACKAGE


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
            return lifecycle.case_result(
                deps.repo.get_case(case_id),
                outreach=OutreachResult(
                    email_thread_id=message.thread_id,
                    bucket=Bucket(handled.bucket) if handled.bucket else None,
                    reasoning=f"Reply {message_id} was handled already; nothing more was done.",
                ),
            )
        out = _route_reply(
            deps, message_id, case_id, message.thread_id, bucket, verified, actor, draft
        )
    return lifecycle.case_result(deps.repo.get_case(case_id), outreach=_as_delivered(deps, out))


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
        lifecycle.close_case(
            deps, case_id, Outcome.RESOLVED, actor, "eligibility confirmed by the rider"
        )
    elif bucket is Bucket.QUESTION:
        out = answer("email_question")
        lifecycle.wait_for_reply(deps, case_id, actor)
    elif bucket is Bucket.UPDATE:
        result = "We are re-checking now; you will hear from us if anything is still missing."
        out = answer("email_update", result=result)
        assert verified is not None  # verified before the transaction began
        lifecycle.reaudit(deps, case_id, lambda *_: verified, actor, trigger="update")
    else:
        body = draft or load_prompt(APP_PACKAGE, "email_escalation", **email_values(deps, case))
        out = lifecycle.draft_for_review(deps, case_id, body, actor)
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
