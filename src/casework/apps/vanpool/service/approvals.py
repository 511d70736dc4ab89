"""The approvals a person decides: the pending ones, a decision (resuming the Case Manager's
paused run first), and the settled answer of a repeated request."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from casework.apps.vanpool import agent, lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.lifecycle import REVIEWER
from casework.apps.vanpool.models import ApprovalRequest, ApprovalSettled, CaseStatus, CaseView
from casework.apps.vanpool.repository import APPROVAL_REQUESTED, OPEN_STATUSES, REVIEW_DECISION
from casework.apps.vanpool.service.callers import config_or_default, deps_for
from casework.errors import InputError, NotFoundError
from casework.runtime.review_provider import DecideOutcome
from casework.runtime.runconfig import RunConfig

__all__ = ["decide_approval", "decide_approval_request", "pending_approvals", "settled_approval"]


# ---------------------------------------------------------------------------- approvals
def pending_approvals(deps: VanpoolDeps) -> list[dict[str, Any]]:
    """Every open case's pending approval (a drafted reply or a membership cancellation)."""
    out = []
    for case in deps.repo.list_cases():
        approval = case.meta.get("approval")
        if approval and case.status in OPEN_STATUSES:
            out.append(
                {
                    "case_id": case.case_id,
                    "vanpool_id": case.vanpool_id,
                    "status": case.status,
                    **approval,
                }
            )
    return out


def decide_approval(
    deps: VanpoolDeps,
    case_id: str,
    decision: str,
    body: str | None = None,
    actor: str = REVIEWER,
    config: RunConfig | None = None,
) -> CaseView:
    """A person's decision on a case's pending approval (approve / edit / reject); a paused
    agent run resumes under ``config``.

    The effect runs before the approval is cleared, behind the journal, so a decision
    submitted twice, or retried after a crash, never sends or cancels twice. The log names
    ``config``'s caller beside ``actor``.
    """
    deps = deps_for(deps, config)
    case = deps.repo.get_case(case_id)
    approval = case.meta.get("approval")
    if not approval or case.status == CaseStatus.CLOSED:
        raise NotFoundError(
            f"Case {case_id} has no pending approval; `casework vanpool approvals` lists them."
        )
    if decision not in approval.get("allowed", []):
        raise InputError(
            f"{approval['action']} accepts {' / '.join(approval['allowed'])}, not {decision!r}."
        )
    if decision == "edit" and not (body and body.strip()):
        raise InputError("An edit needs the new email text.")
    if approval.get("mode") == "agent":
        # The Case Manager's run is paused (checkpointed) before cancel_membership: resume it.
        agent.resume_case_manager(deps, config_or_default(deps, config), case_id, decision)
        case = deps.repo.get_case(case_id)
        if case.status != CaseStatus.CLOSED:
            return lifecycle.decide_cancel(deps, case_id, decision, approval, actor)
        return case
    if approval["action"] == "cancel_membership":
        return lifecycle.decide_cancel(deps, case_id, decision, approval, actor)
    return lifecycle.decide_draft(deps, case_id, decision, approval["message_id"], body, actor)


def _settled_outcome(settled: ApprovalSettled) -> str:
    if settled.action == "case_closed":
        if settled.detail.get("outcome") == "cancelled":
            return "approved: membership cancelled"
        return "rejected: the membership stays"
    return {
        "draft_approved": "approved: the draft was sent",
        "draft_edited": "edited and sent",
        "draft_rejected": "rejected: the draft was not sent",
        APPROVAL_REQUESTED: "replaced by a later request",
    }.get(settled.action, settled.action)


def settled_approval(deps: VanpoolDeps, request: ApprovalRequest) -> DecideOutcome | None:
    """How an approval request was settled and by whom; None while it still waits."""
    settled = deps.repo.approval_settled(request)
    if settled is None:
        return None
    return DecideOutcome(
        applied=False,
        outcome=_settled_outcome(settled),
        decided_by=settled.decided_by,
        decided_at=settled.decided_at,
    )


def decide_approval_request(
    deps: VanpoolDeps,
    request_id: int,
    decision: str,
    *,
    body: str | None,
    note: str,
    actor: str,
    config: RunConfig | None = None,
) -> DecideOutcome:
    """The review inbox's decision on one approval request: ``decide_approval`` on its case
    (a paused agent run resumes under ``config``), then a ``review_decision`` row naming who
    decided and why. A request another reviewer settled first is not decided again: the answer
    reads who was first."""
    request = deps.repo.approval_request(request_id)
    if not deps.repo.approval_waiting(request.id):
        return _settled_or_gone(deps, request)
    try:
        decide_approval(deps, request.case_id, decision, body, actor=actor, config=config)
    except NotFoundError:
        # Lost a race: the other decision cleared the approval while this one started.
        return _settled_or_gone(deps, request)
    # Who decided, in the log: a resumed agent run writes the effect rows under its name.
    deps_for(deps, config).repo.audit(
        deps.now(),
        actor,
        REVIEW_DECISION,
        case_id=request.case_id,
        vanpool_id=request.vanpool_id,
        detail={"decision": decision, "note": note, "request": request.id},
    )
    first = settled_approval(deps, request)
    if first is None:  # the decision ran, but left no row we know: report it as ours
        return DecideOutcome(True, decision, actor, deps.now())
    return replace(first, applied=first.decided_by == actor)


def _settled_or_gone(deps: VanpoolDeps, request: ApprovalRequest) -> DecideOutcome:
    first = settled_approval(deps, request)
    if first is None:
        raise NotFoundError(
            f"Case {request.case_id} has no pending approval any more; reload the inbox."
        )
    return first
