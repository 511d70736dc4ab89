"""A reply's handling is one transaction: a crash part-way leaves the reply ``received`` with
nothing else written, and the next tick handles it, its email queued once. Every row names
the caller who caused it."""

from __future__ import annotations

import getpass

import pytest
from vanpool_helpers import Sink, first

from casework.apps.vanpool import lifecycle, reply_routing, service
from casework.errors import InputError
from casework.runtime.context import Caller, Role
from casework.runtime.runconfig import RunConfig


def _open_case(deps, truth) -> tuple[str, str]:
    result, _ = lifecycle.audit_vanpool(deps, first(truth, "shift_mismatch")["vanpool_id"])
    case = deps.repo.get_case(result.case_id)
    assert case.thread_id is not None
    return case.case_id, case.thread_id


def _outbound(deps, thread_id: str) -> list:
    return [m for m in deps.repo.messages(thread_id) if m.direction == "outbound"]


def test_a_crash_mid_reply_leaves_it_received_and_the_next_tick_handles_it_once(
    deps, truth, sink: Sink, monkeypatch
) -> None:
    case_id, thread_id = _open_case(deps, truth)
    log_before = len(deps.repo.audit_log(case_id=case_id))

    def crash(*args, **kwargs):
        raise RuntimeError("killed after the answer was queued")

    # An acknowledgment queues its answer, then closes the case: die in between.
    monkeypatch.setattr(lifecycle, "close_case", crash)
    with pytest.raises(RuntimeError):
        service.reply_to_case(deps, case_id, "All good, thanks, I confirm.", "rules")
    [reply] = [m for m in deps.repo.messages(thread_id) if m.direction == "inbound"]
    assert (reply.status, reply.bucket) == ("received", None)
    assert len(_outbound(deps, thread_id)) == 1 and len(sink.messages) == 1  # the outreach
    assert len(deps.repo.audit_log(case_id=case_id)) == log_before
    assert deps.repo.get_case(case_id).status == "pending_reply"

    monkeypatch.undo()
    ticked = service.tick(deps, "rules")
    assert ticked["replies"] == [{"message_id": reply.message_id, "case_id": case_id}]
    assert deps.repo.get_message(reply.message_id).status == "handled"
    answers = _outbound(deps, thread_id)[1:]
    assert len(answers) == 1 and answers[0].status == "sent" and len(sink.messages) == 2
    log = deps.repo.audit_log(case_id=case_id)[log_before:]
    assert [a["action"] for a in log] == [
        "reply_classified",
        "email_queued",
        "case_closed",
        "email_sent",
    ]
    assert {a["detail"].get("message_id") for a in log if "email" in a["action"]} == {
        answers[0].message_id
    }
    assert deps.repo.get_case(case_id).outcome == "resolved"
    assert service.tick(deps, "rules")["replies"] == []  # nothing left to pick up


def test_a_reply_that_cannot_be_handled_waits_and_the_tick_goes_on(
    deps, truth, sink: Sink, monkeypatch
) -> None:
    case_id, thread_id = _open_case(deps, truth)
    for text in ("When does the van leave?", "Thanks, all correct."):
        deps.repo.add_message(
            thread_id,
            direction="inbound",
            status="received",
            sender="rider@example.com",
            recipients=[],
            subject="Re",
            body=text,
            now=deps.now(),
        )
    real = reply_routing.process_reply

    def refuse_questions(deps, message_id, bucket, *args, **kwargs):
        if bucket == "question":
            raise InputError("The question cannot be answered now.")
        return real(deps, message_id, bucket, *args, **kwargs)

    monkeypatch.setattr(reply_routing, "process_reply", refuse_questions)
    question, thanks = service.tick(deps, "rules")["replies"]
    assert question["error"] == "The question cannot be answered now."
    assert thanks["case_id"] == case_id and "error" not in thanks
    assert deps.repo.received_replies() == [question["message_id"]]
    assert deps.repo.get_case(case_id).outcome == "resolved"


def test_a_reply_handled_already_is_not_handled_again(deps, truth, sink: Sink) -> None:
    case_id, thread_id = _open_case(deps, truth)
    first_step = service.reply_to_case(deps, case_id, "When does the van leave?", "rules")
    [reply] = [m for m in deps.repo.messages(thread_id) if m.direction == "inbound"]
    assert first_step.outreach is not None and first_step.outreach.sent
    again = service.process_reply(deps, reply.message_id, "acknowledgment")
    assert again.outreach is not None and "handled already" in again.outreach.reasoning
    assert again.outreach.bucket == "question"  # as stored the first time
    assert len(_outbound(deps, thread_id)) == 2 and len(sink.messages) == 2
    assert deps.repo.get_case(case_id).status == "pending_reply"


def test_every_row_names_its_caller(deps, truth, sink: Sink) -> None:
    case_id, _ = _open_case(deps, truth)
    ana = RunConfig.of(deps.settings, caller=Caller(3, "ana", Role.REVIEWER))
    before = len(deps.repo.audit_log(case_id=case_id))
    service.reply_to_case(deps, case_id, "I dispute this, it is unfair.", "rules", ana)
    service.decide_approval(deps, case_id, "reject", config=ana)
    log = deps.repo.audit_log(case_id=case_id)
    # The audit the operator ran from the CLI, then ana's reply and decision.
    assert {a["caller"] for a in log[:before]} == {f"cli:{getpass.getuser()}"}
    assert [a["caller"] for a in log[before:]] == ["ana"] * (len(log) - before)
    assert [a["action"] for a in log[before:]] == [
        "reply_classified",
        "approval_requested",
        "draft_rejected",
        "case_updated",
    ]
