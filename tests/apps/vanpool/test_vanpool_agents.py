"""The four agents with scripted models: tools, context scoping, parallel specialists, results."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from vanpool_helpers import first, specialist_responder

from casework.apps.vanpool import agent as vp_agent
from casework.apps.vanpool import lifecycle, service
from casework.apps.vanpool.evaluation import SHIFT_EVIDENCE_FIELDS, evidence_completeness
from casework.errors import NotFoundError
from casework.llm import RoleModels, ScriptedChatModel, call, say
from casework.runtime import RunConfig, checkpoint


def both(*calls: AIMessage) -> AIMessage:
    """One turn with several tool calls (the specialists in parallel)."""
    return AIMessage(content="", tool_calls=[tc for m in calls for tc in m.tool_calls])


def models_for(scripts: dict[str, Any]):
    def models(role: str):
        return scripts[role]

    return models


def run_on(scripts: dict[str, Any]) -> RunConfig:
    """A run config whose models are ``scripts`` (role -> scripted model)."""
    return RunConfig(models=RoleModels.given(models_for(scripts)))


def test_shift_specialist_scripted(deps, truth) -> None:
    t = first(truth, "shift_mismatch")
    vp = deps.repo.get_vanpool(t["vanpool_id"])
    ids = [e.employee_id for e in vp.riders]
    model = ScriptedChatModel(responder=specialist_responder)
    d = run_on({"specialist": model})
    decision = vp_agent.run_shift_specialist(deps, d, ids, vp.vanpool_id)
    assert decision.verdict == "fail"
    assert decision.failed_employees == t["expected"]["failing_employees"]["shift"]
    assert decision.run.ended_by == "submit"
    assert decision.run.tool_names == ["get_employee_shifts", "submit_decision"]
    out = decision.spec_output()
    assert (out["verdict"], out["confidence"]) == ("fail", 5)


@pytest.mark.parametrize(
    ("ids", "vanpool", "message"),
    [
        (["EMP-1001"], "VP-999", "Vanpool VP-999 does not exist."),
        (["EMP-1001", "EMP-9999"], None, "Employee EMP-9999 does not exist."),
    ],
)
def test_unknown_ids_stop_the_shift_specialist_before_any_model_call(
    deps, ids, vanpool, message
) -> None:
    model = ScriptedChatModel(steps=[])  # any model call would fail the test
    with pytest.raises(NotFoundError, match=message):
        vp_agent.run_shift_specialist(deps, run_on({"specialist": model}), ids, vanpool)


def test_shift_evidence_is_grounded_in_the_tool_output(deps, truth) -> None:
    """The model cites (get_employee_shifts, EMP id); the fields come from the tool's output,
    and they reach the spec's output, the case-manager's observation and the case."""
    t = first(truth, "shift_mismatch")
    vp = deps.repo.get_vanpool(t["vanpool_id"])
    [bad] = t["expected"]["failing_employees"]["shift"]
    d = run_on({"specialist": ScriptedChatModel(responder=specialist_responder)})
    decision = vp_agent.run_shift_specialist(
        deps, d, [e.employee_id for e in vp.riders], vp.vanpool_id
    )
    tool_out = json.loads(decision.run.tool_calls[0].output)
    row = next(e for e in tool_out["employees"] if e["employee_id"] == bad)
    item = decision.evidence[0]
    assert (item.source, item.ref) == ("get_employee_shifts", bad)
    assert item.fields["overlap_minutes"] == row["overlap_minutes"] < 30
    assert (item.fields["shift_id"], item.fields["vanpool_id"]) == (row["shift_id"], vp.vanpool_id)
    dumped = decision.model_dump(mode="json")
    assert evidence_completeness(dumped) == 1.0
    assert len(decision.evidence) == min(5, len(vp.riders))
    spec = decision.spec_output()["evidence"][0]
    assert (spec["type"], spec["ref"], spec["overlap_minutes"]) == (
        "get_employee_shifts",
        bad,
        row["overlap_minutes"],
    )


def test_grounding_survives_a_tool_output_longer_than_the_runtime_keeps(deps) -> None:
    """Twelve employees' shifts are more than the 2,000 characters the runtime's records keep;
    the evidence of the last one is still grounded on the full output."""
    ids = [f"EMP-{n}" for n in range(1001, 1013)]
    last = ids[-1]
    model = ScriptedChatModel(
        steps=[
            call("get_employee_shifts"),
            call(
                "submit_decision",
                verdict="pass",
                confidence=70,
                reasoning="Checked.",
                evidence=[
                    {"source": "get_employee_shifts", "ref": last, "summary": "ok"},
                    {"source": "functions.get_employee_shifts", "ref": ids[0], "summary": "ok"},
                    {"source": "the roster", "ref": ids[1], "summary": "not a tool: no fields"},
                ],
            ),
        ]
    )
    decision = vp_agent.run_shift_specialist(deps, run_on({"specialist": model}), ids)
    assert len(decision.run.tool_calls[0].output) == 2000  # the runtime's record is cut
    fields = decision.evidence[0].fields
    assert fields["employee_id"] == last
    assert set(SHIFT_EVIDENCE_FIELDS) <= set(fields)
    assert fields["shift_id"] == deps.repo.get_employee(last).shift_id
    named, unnamed = decision.evidence[1:]
    assert (named.source, named.fields["employee_id"]) == ("get_employee_shifts", ids[0])
    assert (unnamed.source, unnamed.fields) == ("the roster", {})


def test_location_evidence_is_grounded(deps, truth) -> None:
    t = first(truth, "location_mismatch")
    [far] = t["expected"]["failing_employees"]["location"]
    d = run_on({"specialist": ScriptedChatModel(responder=specialist_responder)})
    decision = vp_agent.run_location_specialist(deps, d, t["vanpool_id"])
    [item] = decision.evidence
    assert (item.ref, item.fields["employee_id"], item.fields["within_threshold"]) == (
        far,
        far,
        False,
    )
    assert item.fields["distance_miles"] > item.fields["threshold_miles"] == 50


def test_a_fail_without_its_riders_lists_the_cited_riders_that_break_the_rule(deps, truth) -> None:
    t = first(truth, "location_mismatch")
    [far] = t["expected"]["failing_employees"]["location"]
    riders = [e.employee_id for e in deps.repo.get_vanpool(t["vanpool_id"]).riders]
    near = next(r for r in riders if r != far)
    model = ScriptedChatModel(
        steps=[
            call("check_commute_distance"),
            call(
                "submit_decision",
                verdict="fail",
                confidence=90,
                reasoning="One rider lives too far.",
                evidence=[
                    {"source": "check_commute_distance", "ref": far, "summary": "far"},
                    {"source": "check_commute_distance", "ref": near, "summary": "near"},
                ],
            ),
        ]
    )
    decision = vp_agent.run_location_specialist(
        deps, run_on({"specialist": model}), t["vanpool_id"]
    )
    assert (decision.verdict, decision.failed_employees) == ("fail", [far])


def test_location_specialist_rejects_ids_outside_the_vanpool(deps, truth) -> None:
    t = first(truth, "location_mismatch")
    vp = deps.repo.get_vanpool(t["vanpool_id"])
    far = t["expected"]["failing_employees"]["location"][0]
    model = ScriptedChatModel(
        steps=[
            call("check_commute_distance", employee_ids=["EMP-9999"]),
            call("check_commute_distance", employee_ids=[far]),
            call(
                "submit_decision",
                verdict="fail",
                confidence=80,
                reasoning="Too far.",
                failed_employees=[far],
            ),
        ]
    )
    decision = vp_agent.run_location_specialist(deps, run_on({"specialist": model}), vp.vanpool_id)
    calls = decision.run.tool_calls
    assert not calls[0].ok and "not a rider of" in calls[0].output
    [distance] = json.loads(calls[1].output)["distances"]
    assert calls[1].ok and distance["within_threshold"] is False and distance["distance_miles"] > 50
    assert decision.failed_employees == [far]
    model.assert_exhausted()


def test_case_manager_runs_specialists_in_one_turn_and_opens_a_case(deps, truth, sink) -> None:
    t = first(truth, "shift_mismatch")
    cm = ScriptedChatModel(
        steps=[
            both(call("run_location_specialist"), call("run_shift_specialist")),
            call("upsert_case", failed_checks=["location"]),  # wrong: corrected by the tool
            call("upsert_case", failed_checks=["shift"]),
            call("run_outreach"),
            call(
                "submit_decision",
                verdict="pending_reply",
                confidence=90,
                reasoning="Shift conflict; rider emailed.",
            ),
        ]
    )
    d = run_on(
        {"orchestrator": cm, "specialist": ScriptedChatModel(responder=specialist_responder)}
    )
    result = vp_agent.run_case_manager(deps, d, t["vanpool_id"])
    cm.assert_exhausted()
    assert result.verdict == "pending_reply"
    assert result.failed_checks == ["shift"]
    case = deps.repo.get_case(result.case_id)
    assert (case.status, case.meta["opened_by"], case.meta["template"]) == (
        "pending_reply",
        "case_manager_agent",
        "shift_mismatch",
    )
    assert result.outreach.sent and len(sink.messages) == 1
    # "Why did it fail": the case keeps the specialist's grounded citation of the rider.
    [bad] = t["expected"]["failing_employees"]["shift"]
    [cited] = [e for e in case.meta["evidence"] if e["ref"] == bad]
    assert cited["type"] == "get_employee_shifts" and cited["overlap_minutes"] < 30
    assert cited["vanpool_id"] == t["vanpool_id"] and cited["shift_id"].startswith("SH-")
    names = result.run.tool_names
    assert names[:2] == ["run_location_specialist", "run_shift_specialist"]
    assert [c.ok for c in result.run.tool_calls][2:4] == [False, True]


def test_case_manager_verifies_a_clean_vanpool(deps, truth) -> None:
    t = first(truth, "clean")
    cm = ScriptedChatModel(
        steps=[
            both(call("run_location_specialist"), call("run_shift_specialist")),
            call("submit_decision", verdict="verified", confidence=95, reasoning="Both pass."),
        ]
    )
    d = run_on(
        {"orchestrator": cm, "specialist": ScriptedChatModel(responder=specialist_responder)}
    )
    result = vp_agent.run_case_manager(deps, d, t["vanpool_id"])
    assert (result.verdict, result.case_id) == ("verified", None)
    assert deps.repo.list_cases() == []


def test_outreach_agent_escalation_is_drafted_not_sent(deps, truth, sink, clock) -> None:
    vp = first(truth, "shift_mismatch")["vanpool_id"]
    result, _ = lifecycle.audit_vanpool(deps, vp)
    thread = deps.repo.get_case(result.case_id).thread_id
    msg = deps.repo.add_message(
        thread,
        direction="inbound",
        status="received",
        sender="r@example.com",
        recipients=[],
        subject="Re",
        body="I dispute this, it is unfair.",
        now=clock(),
    )
    outreach = ScriptedChatModel(
        steps=[
            call("classify_reply"),
            call("send_email", body="Sorry!"),  # refused: escalations go to review
            call("send_email_for_review", body="We hear you; a person will review this."),
            call("submit_outcome", reasoning="Escalation drafted for review."),
        ]
    )
    classifier = ScriptedChatModel(steps=[say("escalation")])
    d = run_on({"outreach": outreach, "classifier": classifier, "specialist": None})
    step = vp_agent.agent_process_reply(deps, d, msg)
    out = step.outreach
    assert (out.bucket, out.hitl_required, out.sent, out.verdict) == (
        "escalation",
        True,
        False,
        "draft",
    )
    assert deps.repo.get_message(out.message_id).status == "draft"
    assert deps.repo.get_case(result.case_id).status == "hitl_review"
    assert len(sink.messages) == 1
    assert [c.ok for c in out.run.tool_calls] == [True, False, True, True]


def test_classifier_falls_back_to_rules_when_the_model_names_no_bucket(deps) -> None:
    d = run_on({"classifier": ScriptedChatModel(steps=[say("I am not sure.")])})
    assert vp_agent.classify_with_model(d, "I moved to a new address last week.") == "update"
    d = run_on({"classifier": ScriptedChatModel(steps=[say("Bucket: question")])})
    assert vp_agent.classify_with_model(d, "anything") == "question"


def test_an_escalation_cue_goes_to_a_person_whatever_the_model_says(deps) -> None:
    d = run_on({"classifier": ScriptedChatModel(steps=[say("acknowledgment")] * 2)})
    angry = "This is ridiculous. I have ridden this van for 5 years."
    assert vp_agent.classify_with_model(d, angry) == "escalation"
    assert vp_agent.classify_with_model(d, "Thanks, all correct.") == "acknowledgment"


def test_case_manager_cancel_pauses_and_resumes_once_across_restart(
    deps, truth, sink, clock, tmp_path
) -> None:
    from vanpool_helpers import make_deps

    t = first(truth, "shift_mismatch")
    vp, night = t["vanpool_id"], t["expected"]["failing_employees"]["shift"]
    result, _ = lifecycle.audit_vanpool(deps, vp)
    for _ in range(3):
        clock.advance(days=7, minutes=1)
        service.tick(deps)
    assert deps.repo.get_case(result.case_id).status == "pre_cancel"
    riders = len(deps.repo.get_vanpool(vp).riders)

    cm = ScriptedChatModel(steps=[call("cancel_membership")])
    paused = vp_agent.run_case_manager(deps, run_on({"orchestrator": cm}), vp)
    assert (paused.verdict, paused.case_id, paused.run.ended_by) == (
        "pre_cancel",
        result.case_id,
        "interrupted",
    )
    [approval] = service.pending_approvals(deps)
    assert (approval["mode"], approval["employee_ids"]) == ("agent", night)
    assert len(deps.repo.get_vanpool(vp).riders) == riders  # nothing happened before approval

    # Another process resumes the checkpointed run by the case id.
    resumed_model = ScriptedChatModel(
        steps=[
            call(
                "submit_decision",
                verdict="closed",
                confidence=90,
                reasoning="Cancelled after approval.",
            )
        ]
    )
    restarted = make_deps(tmp_path / "home", sink.port, clock)
    config = run_on({"orchestrator": resumed_model})
    case = service.decide_approval(restarted, result.case_id, "approve", config=config)
    resumed_model.assert_exhausted()
    assert (case.status, case.outcome) == ("closed", "cancelled")
    assert len(restarted.repo.get_vanpool(vp).riders) == riders - len(night)
    assert restarted.journal.count("cancel_membership") == len(night)
    import pytest

    from casework.errors import NotFoundError

    with pytest.raises(NotFoundError):
        service.decide_approval(restarted, result.case_id, "approve", config=config)
    assert len(restarted.repo.get_vanpool(vp).riders) == riders - len(night)


def test_a_lost_checkpoint_still_applies_the_approval_once(
    deps, truth, sink, clock, tmp_path
) -> None:
    t = first(truth, "location_mismatch")
    result, _ = lifecycle.audit_vanpool(deps, t["vanpool_id"])
    for _ in range(3):
        clock.advance(days=7, minutes=1)
        service.tick(deps)
    vp_agent.run_case_manager(
        deps,
        run_on({"orchestrator": ScriptedChatModel(steps=[call("cancel_membership")])}),
        t["vanpool_id"],
    )
    # The checkpoint file is lost (a new machine, a wiped disk): the approval still applies.
    deps.settings.checkpoint_path.unlink()
    checkpoint._savers.clear()  # the process forgets its saver too
    case = service.decide_approval(
        deps, result.case_id, "approve", config=run_on({"orchestrator": None})
    )
    assert (case.status, case.outcome) == ("closed", "cancelled")
    assert deps.journal.count("cancel_membership") == 1


def test_case_manager_is_offered_only_the_tools_that_can_act() -> None:
    from casework.apps.vanpool.models import LocationDecision, ShiftDecision
    from casework.apps.vanpool.tools import case_manager_offer

    def loc(v: str) -> LocationDecision:
        return LocationDecision(verdict=v, confidence=4, reasoning="r")

    def shift(v: str) -> ShiftDecision:
        return ShiftDecision(verdict=v, confidence=4, reasoning="r")

    def offer(results: dict[str, Any], status: str | None = None) -> list[str]:
        return sorted(case_manager_offer(results, status))

    submit = "submit_decision"
    # no decision before both specialists answered (the bundled model decided after one)
    assert offer({}) == ["run_location_specialist", "run_shift_specialist"]
    assert offer({"location": loc("pass")}) == ["run_shift_specialist"]
    # both passed, no case: nothing to open, only the decision
    assert offer({"location": loc("pass"), "shift": shift("pass")}) == [submit]
    # a failed check: the case, then the outreach, then the decision
    failed = {"location": loc("fail"), "shift": shift("pass")}
    assert offer(failed) == ["upsert_case"]
    assert offer(failed, "pending_reply") == ["upsert_case"]
    assert offer({**failed, "case_id": "CASE-1"}) == ["run_outreach"]
    assert offer({**failed, "case_id": "CASE-1", "outreach": object()}) == [submit]
    # an open case whose re-audit passed is closed before the decision
    passed = {"location": loc("pass"), "shift": shift("pass")}
    assert offer(passed, "pending_reply") == ["close_case"]
    # a pre-cancel case is decided on the approval, with or without a new audit
    assert offer({}, "pre_cancel") == [
        "cancel_membership",
        "run_location_specialist",
        "run_shift_specialist",
        submit,
    ]
    assert offer(passed, "pre_cancel") == ["cancel_membership", submit]
    assert offer({"cancelled": True}) == [
        "run_location_specialist",
        "run_shift_specialist",
        submit,
    ]
    # a check without a verdict: no case, no close; a person looks
    assert offer({"location": loc("NEEDS_REVIEW"), "shift": shift("fail")}, "pending_reply") == [
        submit
    ]


def test_case_manager_model_sees_the_offered_tools_each_turn(deps, truth) -> None:
    t = first(truth, "shift_mismatch")
    seen: list[list[str]] = []
    script = [
        both(call("run_location_specialist"), call("run_shift_specialist")),
        call("upsert_case", failed_checks=["shift"]),
        call("run_outreach"),
        call("submit_decision", verdict="pending_reply", confidence=80, reasoning="r"),
    ]

    def orchestrator(messages: list[Any], tools: list[str]) -> AIMessage:
        seen.append(sorted(tools))
        return script[len(seen) - 1]

    d = run_on(
        {
            "orchestrator": ScriptedChatModel(responder=orchestrator),
            "specialist": ScriptedChatModel(responder=specialist_responder),
        },
    )
    result = vp_agent.run_case_manager(deps, d, t["vanpool_id"])
    assert result.verdict == "pending_reply"
    assert seen == [
        ["run_location_specialist", "run_shift_specialist"],
        ["upsert_case"],
        ["run_outreach"],
        ["submit_decision"],
    ]


def test_the_classifier_strategy_counts_its_model_call(deps) -> None:
    from casework.apps.vanpool.strategies import ReplyInput, agent_classify

    d = run_on({"classifier": ScriptedChatModel(steps=[say("escalation")])})
    result = agent_classify(ReplyInput("This is ridiculous, I will call a lawyer."), deps, d)
    assert (result.bucket, result.hitl_required) == ("escalation", True)
    assert result.run is not None and result.run.usage is not None
    assert result.run.usage.model_calls == 1


def test_the_case_manager_must_call_an_offered_tool_at_every_step(deps) -> None:
    from types import SimpleNamespace

    from langchain_core.tools import tool

    from casework.apps.vanpool.models import LocationDecision, ShiftDecision
    from casework.apps.vanpool.tools import CaseContext, OfferedTools
    from casework.runtime.loop import model_request

    @tool
    def run_location_specialist() -> str:
        """Location."""
        return ""

    @tool
    def run_shift_specialist() -> str:
        """Shift."""
        return ""

    @tool
    def submit_decision() -> str:
        """Decide."""
        return ""

    tools = [run_location_specialist, run_shift_specialist, submit_decision]
    ctx = CaseContext("VP-101")

    def narrowed(tool_choice: Any = None) -> tuple[list[str], Any]:
        request = model_request(
            model=None,
            messages=[],
            system_message=None,
            tool_choice=tool_choice,
            tools=tools,
            response_format=None,
            state={},
            runtime=SimpleNamespace(context=ctx),
            model_settings={},
        )
        out = OfferedTools(deps)._narrow(request)
        return [t.name for t in out.tools], out.tool_choice

    assert narrowed() == (["run_location_specialist", "run_shift_specialist"], "any")
    # a tool the runtime forces stays bound
    assert narrowed("submit_decision") == (
        ["run_location_specialist", "run_shift_specialist", "submit_decision"],
        "submit_decision",
    )
    ctx.results.update(
        location=LocationDecision(verdict="pass", confidence=90, reasoning="r"),
        shift=ShiftDecision(verdict="pass", confidence=90, reasoning="r"),
    )
    assert narrowed() == (["submit_decision"], "any")
