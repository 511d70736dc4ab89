"""The vanpool review provider: approvals listed, decided through the CLI's call, exactly once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from vanpool_helpers import Clock, Sink, first

from casework.apps.vanpool import lifecycle, service
from casework.apps.vanpool.review import CANCEL, DECIDED, DRAFT, VanpoolReview
from casework.config import Settings
from casework.errors import InputError
from casework.llm import RoleModels
from casework.runtime import RunConfig
from casework.runtime.context import Caller, Role
from casework.runtime.review_provider import WAITING, Cursor, ReviewFilters

ANA = Caller(1, "ana", Role.REVIEWER)
CY = Caller(2, "cy", Role.REVIEWER)
XSS = '<script>alert("owned")</script>'


def _pre_cancel(deps, truth) -> tuple[str, str, list[str]]:
    t = first(truth, "shift_mismatch")
    result, _ = lifecycle.audit_vanpool(deps, t["vanpool_id"])
    lifecycle.request_cancel(deps, result.case_id, "rules_auditor")
    return t["vanpool_id"], result.case_id, t["expected"]["failing_employees"]["shift"]


def _escalation(deps, truth, clock: Clock, text: str) -> tuple[str, str]:
    """A case whose rider escalated; the drafted answer waits for review."""
    vp = first(truth, "location_mismatch")["vanpool_id"]
    result, _ = lifecycle.audit_vanpool(deps, vp)
    thread = deps.repo.get_case(result.case_id).thread_id
    deps.repo.add_message(
        thread,
        direction="inbound",
        status="received",
        sender="rider@example.com",
        recipients=[],
        subject="Re",
        body=text,
        now=clock(),
    )
    out = lifecycle.draft_for_review(deps, result.case_id, "We will look into it.", "outreach")
    assert out.message_id is not None
    return result.case_id, out.message_id


def test_cancel_membership_is_listed_and_approved_once(deps, truth, clock: Clock) -> None:
    vp, case_id, night = _pre_cancel(deps, truth)
    review = VanpoolReview(Settings(), deps=deps)
    [item] = review.items(ReviewFilters(), limit=10)
    assert (item.kind, item.status, item.title) == (
        CANCEL,
        WAITING,
        f"Cancel the membership of {', '.join(night)} in {vp}",
    )
    assert review.count(ReviewFilters()) == 1
    detail = review.get(item.id)
    assert detail.actions == ["approve", "reject"]
    assert detail.decision is not None and detail.decision.evidence
    assert all(e.ref for e in detail.decision.evidence)
    titles = [s.title for s in detail.sections]
    assert titles == ["The pending action", "Email thread", "Case timeline (audit log)"]
    assert "approval_requested" in [row[2] for row in detail.sections[2].rows]
    with pytest.raises(InputError, match="accepts approve / reject"):
        review.decide(item.id, "edit", note="", edit="x", caller=ANA)

    riders = len(deps.repo.get_vanpool(vp).riders)
    clock.advance(minutes=5)
    done = review.decide(item.id, "approve", note="three silent weeks", edit=None, caller=ANA)
    assert (done.applied, done.outcome, done.decided_by) == (
        True,
        "approved: membership cancelled",
        "ana",
    )
    again = review.decide(item.id, "approve", note="", edit=None, caller=ANA)
    late = review.decide(item.id, "reject", note="no", edit=None, caller=CY)
    assert (again.applied, late.applied, late.decided_by, late.outcome) == (
        False,
        False,
        "ana",
        "approved: membership cancelled",
    )
    assert len(deps.repo.get_vanpool(vp).riders) == riders - len(night)
    assert deps.journal.count("cancel_membership") == len(night)
    case = deps.repo.get_case(case_id)
    assert (case.status, case.outcome) == ("closed", "cancelled")
    notes = [a for a in deps.repo.audit_log(case_id=case_id) if a["action"] == "review_decision"]
    assert [(a["actor"], a["detail"]["note"]) for a in notes] == [("ana", "three silent weeks")]

    assert review.items(ReviewFilters(), limit=10) == []
    [decided] = review.items(ReviewFilters(status=DECIDED), limit=10)
    assert decided.id == item.id
    after = review.get(item.id)
    assert (after.actions, after.decided_by, after.item.status) == ([], "ana", DECIDED)


def test_rejecting_a_cancellation_keeps_the_riders(deps, truth) -> None:
    vp, case_id, _night = _pre_cancel(deps, truth)
    review = VanpoolReview(Settings(), deps=deps)
    riders = len(deps.repo.get_vanpool(vp).riders)
    [item] = review.items(ReviewFilters(), limit=10)
    out = review.decide(item.id, "reject", note="", edit=None, caller=CY)
    assert (out.applied, out.outcome, out.decided_by) == (
        True,
        "rejected: the membership stays",
        "cy",
    )
    assert len(deps.repo.get_vanpool(vp).riders) == riders
    assert deps.repo.get_case(case_id).outcome == "resolved"


def test_edited_draft_is_sent_once_through_smtp(deps, truth, sink: Sink, clock: Clock) -> None:
    case_id, message_id = _escalation(deps, truth, clock, f"I dispute this {XSS}")
    review = VanpoolReview(Settings(), deps=deps)
    [item] = review.items(ReviewFilters(), limit=10)
    assert item.kind == DRAFT
    assert item.summary == f"{case_id}: We will look into it."
    detail = review.get(item.id)
    assert (detail.actions, detail.edit_value) == (
        ["approve", "edit", "reject"],
        "We will look into it.",
    )
    thread = next(s for s in detail.sections if s.title == "Email thread")
    assert [row[1:3] for row in thread.rows] == [
        ["outbound", "sent"],
        ["inbound", "received"],
        ["outbound", "draft"],
    ]
    assert thread.rows[1][5] == f"I dispute this {XSS}"
    sent_before = len(sink.messages)
    with pytest.raises(InputError, match="needs the new email text"):
        review.decide(item.id, "edit", note="", edit="  ", caller=ANA)
    out = review.decide(item.id, "edit", note="", edit="A person will call you today.", caller=ANA)
    assert (out.applied, out.outcome) == (True, "edited and sent")
    twice = review.decide(item.id, "approve", note="", edit=None, caller=CY)
    assert (twice.applied, twice.decided_by, twice.outcome) == (False, "ana", "edited and sent")
    assert len(sink.messages) == sent_before + 1
    assert sink.messages[-1].get_content().strip() == "A person will call you today."
    assert deps.repo.get_message(message_id).status == "sent"
    assert deps.repo.get_case(case_id).status == "pending_reply"


def test_filters_and_keyset_pages(deps, truth, clock: Clock) -> None:
    _pre_cancel(deps, truth)
    clock.advance(days=10)
    _escalation(deps, truth, clock, "This is ridiculous.")
    review = VanpoolReview(Settings(), deps=deps)
    newest, oldest = review.items(ReviewFilters(), limit=10)
    assert (newest.kind, oldest.kind) == (DRAFT, CANCEL)
    assert review.items(
        ReviewFilters(), limit=1, before=Cursor(newest.created_at, newest.sort_id)
    ) == [oldest]
    recent = ReviewFilters(created_after=clock() - timedelta(days=1))
    assert [i.id for i in review.items(recent, limit=10)] == [newest.id]
    assert review.count(ReviewFilters(created_before=clock() - timedelta(days=7))) == 1
    with pytest.raises(InputError, match="Unknown status"):
        review.count(ReviewFilters(status="lost"))


def test_a_paused_case_manager_run_is_listed_and_resumed_by_the_decision(
    deps, truth, clock: Clock
) -> None:
    """The runtime's approval interrupt (HITL middleware before cancel_membership) is recorded
    with the case, so it reaches the inbox; deciding resumes the checkpointed run."""

    from casework.apps.vanpool import agent as vp_agent
    from casework.llm import ScriptedChatModel, call

    t = first(truth, "shift_mismatch")
    vp, night = t["vanpool_id"], t["expected"]["failing_employees"]["shift"]
    lifecycle.audit_vanpool(deps, vp)
    for _ in range(3):
        clock.advance(days=7, minutes=1)
        service.tick(deps)
    clock.advance(minutes=1)
    paused = ScriptedChatModel(steps=[call("cancel_membership")])
    vp_agent.run_case_manager(deps, RunConfig(models=RoleModels.given(paused)), vp)
    resumed = ScriptedChatModel(
        steps=[call("submit_decision", verdict="closed", confidence=90, reasoning="Approved.")]
    )
    review = VanpoolReview(Settings(), deps=deps, models=RoleModels.given(resumed))
    [item] = review.items(ReviewFilters(), limit=10)
    [superseded] = review.items(ReviewFilters(status=DECIDED), limit=10)
    assert review.get(superseded.id).outcome == "replaced by a later request"
    pending = review.get(item.id).sections[0].fields
    assert pending["run"].startswith("Case Manager agent, paused (thread vanpool-cm-")
    riders = len(deps.repo.get_vanpool(vp).riders)
    out = review.decide(item.id, "approve", note="", edit=None, caller=ANA)
    resumed.assert_exhausted()
    assert (out.applied, out.outcome, out.decided_by) == (
        True,
        "approved: membership cancelled",
        "ana",
    )
    assert len(deps.repo.get_vanpool(vp).riders) == riders - len(night)
    assert deps.journal.count("cancel_membership") == len(night)


def test_two_reviewers_at_once_cancel_once(deps, truth) -> None:
    import threading

    vp, _case_id, night = _pre_cancel(deps, truth)
    review = VanpoolReview(Settings(), deps=deps)
    [item] = review.items(ReviewFilters(), limit=10)
    riders = len(deps.repo.get_vanpool(vp).riders)
    outcomes = []
    start = threading.Barrier(2)

    def press(who: Caller) -> None:
        start.wait()
        outcomes.append(review.decide(item.id, "approve", note="", edit=None, caller=who))

    threads = [threading.Thread(target=press, args=(c,)) for c in (ANA, CY)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o.applied for o in outcomes) == [False, True]
    assert len({o.decided_by for o in outcomes}) == 1
    assert len(deps.repo.get_vanpool(vp).riders) == riders - len(night)
    assert deps.journal.count("cancel_membership") == len(night)
