"""The whole lifecycle on the rules auditor, with real SMTP on loopback both ways."""

from __future__ import annotations

import asyncio
from email.message import EmailMessage

import aiosmtplib
import pytest
from vanpool_helpers import Clock, Sink, first, free_port, make_deps

from casework.apps.vanpool import lifecycle, reply_routing, service, verification
from casework.apps.vanpool.geography import zip_coordinates
from casework.apps.vanpool.mail import serve_inbound
from casework.apps.vanpool.reply_cues import classify_reply_keywords
from casework.errors import InputError, NotFoundError


def reply(port: int, original: EmailMessage, text: str) -> None:
    msg = EmailMessage()
    msg["From"] = original["To"]
    msg["To"] = original["From"]
    msg["Subject"] = "Re: " + str(original["Subject"])
    msg["In-Reply-To"] = original["Message-ID"]
    msg.set_content(text + "\n\n> quoted original\n> more")
    asyncio.run(aiosmtplib.send(msg, hostname="127.0.0.1", port=port))


def handle_new_replies(deps, thread_id: str) -> list:
    out = []
    for m in deps.repo.messages(thread_id):
        if m.direction == "inbound" and m.status == "received":
            bucket = classify_reply_keywords(m.body)
            out.append(
                reply_routing.process_reply(
                    deps, m.message_id, bucket, verification.rules_verify, "test"
                )
            )
    return out


def test_clean_vanpool_is_verified_without_a_case(deps, truth, sink: Sink) -> None:
    vp = first(truth, "clean")["vanpool_id"]
    result, verification = lifecycle.audit_vanpool(deps, vp)
    assert result.verdict == "verified"
    assert verification.failed_checks == []
    assert deps.repo.list_cases() == []
    assert sink.messages == []


def test_fail_outreach_update_reply_reaudit_closed(deps, truth, sink: Sink, clock: Clock) -> None:
    t = first(truth, "location_mismatch")
    vp, far = t["vanpool_id"], t["expected"]["failing_employees"]["location"][0]
    result, _ = lifecycle.audit_vanpool(deps, vp)
    assert (result.verdict, result.failed_checks) == ("pending_reply", ["location"])
    case = deps.repo.get_case(result.case_id)
    assert case.meta["reason"] == "location_mismatch"
    assert case.meta["opened_by"] == "rules_auditor"
    assert case.meta["template"] == "location_mismatch"
    assert case.due_at == clock.now + lifecycle.timedelta(days=7)
    # The outreach email really arrived at the SMTP server, addressed to the failing rider.
    assert len(sink.messages) == 1
    sent = sink.messages[0]
    assert deps.repo.get_employee(far).email in sent["To"]
    assert case.thread_id in sent["Subject"]
    assert result.outreach and result.outreach.sent and result.outreach.message_id

    # The rider replies through the inbound SMTP receiver.
    port = free_port()
    controller = serve_inbound(deps.repo, "127.0.0.1", port)
    try:
        reply(port, sent, "I moved last month, I will update my address in the portal.")
    finally:
        controller.stop()
    inbound = [m for m in deps.repo.messages(case.thread_id) if m.direction == "inbound"]
    assert len(inbound) == 1 and inbound[0].body.startswith("I moved")
    assert "quoted" not in inbound[0].body

    # Not fixed yet: the re-audit fails, a reminder goes out, the case waits again.
    clock.advance(hours=1)
    [step] = handle_new_replies(deps, case.thread_id)
    assert step.outreach.bucket == "update"
    case = deps.repo.get_case(case.case_id)
    assert (case.status, case.reaudits) == ("pending_reply", 1)
    assert len(sink.messages) == 3  # outreach, portal pointer, reminder

    # Now the portal has the new address: the next update reply closes the case.
    home = zip_coordinates(deps.repo.get_vanpool(vp).pickup_zip)
    deps.repo.update_employee(far, clock(), home_zip="94536", home_lat=home.lat, home_lng=home.lng)
    deps.repo.add_message(
        case.thread_id,
        direction="inbound",
        status="received",
        sender="x@example.com",
        recipients=[],
        subject="Re",
        body="I updated my address in the portal.",
        now=clock(),
    )
    [step] = handle_new_replies(deps, case.thread_id)
    case = deps.repo.get_case(case.case_id)
    assert (case.status, case.outcome, case.meta["resolution"]) == (
        "closed",
        "resolved",
        "data fixed",
    )
    actions = [a["action"] for a in deps.repo.audit_log(case_id=case.case_id)]
    # The reply's handling commits (its email queued, the re-audit closing the case), then
    # the email goes to SMTP.
    assert actions[0] == "case_opened" and actions[-2:] == ["case_closed", "email_sent"]
    assert actions.index("email_queued") < actions.index("case_closed")
    assert actions.count("reaudit") == 2


def test_silent_timeouts_then_cancel_exactly_once_across_restart(
    deps, truth, sink: Sink, clock: Clock, tmp_path
) -> None:
    t = first(truth, "shift_mismatch")
    vp, night = t["vanpool_id"], t["expected"]["failing_employees"]["shift"]
    result, _ = lifecycle.audit_vanpool(deps, vp)
    case_id = result.case_id
    for _attempt in (1, 2, 3):
        assert service.tick(deps)["reaudited"] == []  # not due yet
        clock.advance(days=7, minutes=1)
        out = service.tick(deps)
        assert [r["case_id"] for r in out["reaudited"]] == [case_id]
    case = deps.repo.get_case(case_id)
    assert (case.status, case.reaudits) == ("pre_cancel", 3)
    [pending] = service.pending_approvals(deps)
    assert (pending["action"], pending["employee_ids"]) == ("cancel_membership", night)
    with pytest.raises(InputError):
        service.decide_approval(deps, case_id, "edit", "x")

    # A new process (fresh deps on the same database) sees the approval and applies it once.
    restarted = make_deps(tmp_path / "home", sink.port, clock)
    riders_before = len(restarted.repo.get_vanpool(vp).riders)
    case = service.decide_approval(restarted, case_id, "approve")
    assert (case.status, case.outcome) == ("closed", "cancelled")
    assert len(restarted.repo.get_vanpool(vp).riders) == riders_before - len(night)
    with pytest.raises(NotFoundError, match="no pending approval"):
        service.decide_approval(restarted, case_id, "approve")
    # Even a crash between the effect and the status change cannot repeat it.
    lifecycle.cancel_membership(restarted, case_id, night, "retry")
    assert len(restarted.repo.get_vanpool(vp).riders) == riders_before - len(night)
    assert restarted.journal.count("cancel_membership") == len(night)


def test_update_reply_failing_three_times_goes_to_pre_cancel(deps, truth, clock: Clock) -> None:
    vp = first(truth, "both_mismatch")["vanpool_id"]
    result, _ = lifecycle.audit_vanpool(deps, vp)
    assert result.failed_checks == ["location", "shift"]
    assert deps.repo.get_case(result.case_id).meta["template"] == "both_mismatch"
    thread = deps.repo.get_case(result.case_id).thread_id
    for _ in range(3):
        deps.repo.add_message(
            thread,
            direction="inbound",
            status="received",
            sender="r@example.com",
            recipients=[],
            subject="Re",
            body="I changed my shift, HR has it.",
            now=clock(),
        )
        handle_new_replies(deps, thread)
    case = deps.repo.get_case(result.case_id)
    assert (case.status, case.reaudits) == ("pre_cancel", 3)
    assert service.pending_approvals(deps)[0]["action"] == "cancel_membership"
    case = service.decide_approval(deps, case.case_id, "reject")
    assert (case.status, case.outcome) == ("closed", "resolved")


def test_escalation_draft_waits_for_review_and_sends_once(
    deps, truth, sink: Sink, clock: Clock
) -> None:
    vp = first(truth, "shift_mismatch")["vanpool_id"]
    result, _ = lifecycle.audit_vanpool(deps, vp)
    thread = deps.repo.get_case(result.case_id).thread_id
    deps.repo.add_message(
        thread,
        direction="inbound",
        status="received",
        sender="r@example.com",
        recipients=[],
        subject="Re",
        body="This is ridiculous, I dispute it.",
        now=clock(),
    )
    [step] = handle_new_replies(deps, thread)
    assert (step.verdict, step.outreach.hitl_required, step.outreach.sent) == (
        "hitl_review",
        True,
        False,
    )
    assert step.outreach.bucket == "escalation"
    draft = deps.repo.get_message(step.outreach.message_id)
    assert draft.status == "draft"
    assert len(sink.messages) == 1  # only the outreach: the draft is not sent
    case = service.decide_approval(
        deps, result.case_id, "edit", "We hear you; a person will call you."
    )
    assert case.status == "pending_reply"
    assert len(sink.messages) == 2
    assert "a person will call you" in sink.messages[-1].get_content()
    with pytest.raises(NotFoundError):
        service.decide_approval(deps, result.case_id, "approve")
    assert len(sink.messages) == 2


def test_smtp_down_queues_and_tick_retries(tmp_path, truth, clock: Clock) -> None:
    from casework.apps.vanpool.roster import import_roster
    from casework.apps.vanpool.synth import DATA_DIR

    port = free_port()  # nothing listens here yet
    deps = make_deps(tmp_path / "home", port, clock)
    import_roster(deps.repo, DATA_DIR / "roster.json", clock())
    result, _ = lifecycle.audit_vanpool(deps, first(truth, "location_mismatch")["vanpool_id"])
    out = result.outreach
    assert (out.verdict, out.sent) == ("queued", False)
    msg = deps.repo.get_message(out.message_id)
    assert (msg.status, msg.attempts, msg.sent_at) == ("queued", 1, None)
    assert "did not accept" in (msg.last_error or "")
    # Retry before the back-off is due does nothing; after it, with the server up, it is sent.
    assert service.tick(deps)["sent"] == 0
    sink = Sink(port)
    sink.start()
    try:
        clock.advance(seconds=61)
        assert service.tick(deps)["sent"] == 1
    finally:
        sink.stop()
    assert deps.repo.get_message(out.message_id).status == "sent"
    assert len(sink.messages) == 1


def test_reply_to_unknown_thread_is_refused(deps) -> None:
    from casework.apps.vanpool.mail import file_reply

    raw = b"From: a@example.com\r\nTo: b@example.com\r\nSubject: Re: [THREAD-DEADBEEF]\r\n\r\nhello\r\n"
    with pytest.raises(NotFoundError, match="THREAD-DEADBEEF"):
        file_reply(deps.repo, raw)
    with pytest.raises(NotFoundError, match="no THREAD"):
        file_reply(deps.repo, b"Subject: hi\r\n\r\nhello\r\n")


def test_reply_is_matched_by_in_reply_to_without_a_subject_tag(deps, truth, sink: Sink) -> None:
    from casework.apps.vanpool.mail import file_reply

    result, _ = lifecycle.audit_vanpool(deps, first(truth, "shift_mismatch")["vanpool_id"])
    sent = sink.messages[0]
    raw = (
        f"From: rider@example.com\r\nTo: pool-patrol@example.com\r\nSubject: Re: hello\r\n"
        f"In-Reply-To: {sent['Message-ID']}\r\n\r\nAll good here, thanks.\r\n"
    ).encode()
    thread_id, msg_id = file_reply(deps.repo, raw)
    assert thread_id == deps.repo.get_case(result.case_id).thread_id
    assert deps.repo.get_message(msg_id).body == "All good here, thanks."


def test_undecided_checks_open_no_case_and_do_not_count(deps, truth, clock: Clock) -> None:
    from casework.apps.vanpool.models import ShiftDecision

    def undecided(deps, vanpool_id, checks):
        v = verification.rules_verify(deps, vanpool_id, checks)
        return verification.Verification(
            v.location, ShiftDecision(verdict="NEEDS_REVIEW", confidence=0, reasoning="limit")
        )

    clean = first(truth, "clean")["vanpool_id"]
    result, _ = lifecycle.audit_vanpool(deps, clean, undecided)
    assert (result.verdict, deps.repo.list_cases()) == ("NEEDS_REVIEW", [])
    opened, _ = lifecycle.audit_vanpool(deps, first(truth, "shift_mismatch")["vanpool_id"])
    clock.advance(days=7, minutes=1)
    service.tick(deps, verifier=undecided)
    case = deps.repo.get_case(opened.case_id)
    assert (case.status, case.reaudits) == ("pending_reply", 0)
