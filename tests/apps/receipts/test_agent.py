"""Scripted runs of the validation agent: tools, policy, limits, the evidence budget, prompts."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from casework.apps.receipts.agent import (
    build_agent,
    decision_from_run,
    render_system_prompt,
    render_task,
)
from casework.apps.receipts.models import LABEL_DEFINITIONS, LabelInput
from casework.apps.receipts.strategies import agent as agent_strategy
from casework.llm import RecordingChatModel, RoleModels, ScriptedChatModel, call, say
from casework.runtime import RunConfig
from casework.runtime.decision import EndReason
from casework.runtime.middleware import DECIDE_NOW


def run_agent(agent, r, **kw):
    """The decision (policy applied, run info filled) and the raw run (for its messages)."""
    raw = agent.run(render_task(r), context=r, trace=False)
    return decision_from_run(raw, model="scripted"), raw


def test_scripted_run_validates_and_records_the_trajectory(seeded, ref):
    r = ref("costco", 42, 3, "GRAND_TOTAL", reason="suggested by the harmoniser")
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("get_merchant_metadata"),
            call(
                "submit_decision",
                verdict="VALID",
                confidence=93,
                reasoning="TOTAL line, right column.",
            ),
        ]
    )
    result, run = run_agent(build_agent(seeded, RunConfig(models=RoleModels.given(model))), r)
    model.assert_exhausted()
    assert (result.verdict, result.confidence, result.policy_applied) == ("VALID", 93, False)
    assert result.run.tool_names == [
        "get_word_context",
        "get_merchant_metadata",
        "submit_decision",
    ]
    assert result.run.strategy == "agent" and result.ended_by == EndReason.SUBMIT
    assert result.run.usage.model_calls == 3
    task = run.messages[0].content
    assert (
        'Word: "303.83"' in task
        and "Suggested label: GRAND_TOTAL" in task
        and "suggested by the harmoniser" in task
    )


def test_policy_is_applied_after_the_agent(seeded, ref):
    r = ref("wildfork", 12, 4, "UNIT_PRICE")
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call(
                "submit_decision",
                verdict="INVALID",
                confidence=72,
                reasoning="Probably the total.",
            ),
        ]
    )
    result, _ = run_agent(build_agent(seeded, RunConfig(models=RoleModels.given(model))), r)
    assert (result.verdict, result.raw_verdict, result.policy_applied) == (
        "NEEDS_REVIEW",
        "INVALID",
        True,
    )
    assert "not above 80%" in result.reasoning


def test_a_run_without_a_decision_ends_as_needs_review(seeded, ref):
    r = ref("wildfork", 12, 4, "UNIT_PRICE")
    model = ScriptedChatModel(
        steps=[call("get_word_context"), say("I think it is fine."), say("Still thinking.")]
    )
    result, _ = run_agent(build_agent(seeded, RunConfig(models=RoleModels.given(model))), r)
    assert (result.verdict, result.confidence) == ("NEEDS_REVIEW", 0)
    assert result.ended_by == EndReason.NO_DECISION and not result.ended_by.decided


def test_evidence_budget_asks_for_the_decision(seeded, ref):
    r = ref("costco", 42, 3, "GRAND_TOTAL")
    seen: list[list] = []

    def responder(messages, tools):
        seen.append(messages)
        done = sum(1 for m in messages if getattr(m, "type", "") == "tool")
        names = [
            "get_word_context",
            "search_similar_words",
            "check_edge_cases",
            "get_merchant_metadata",
            "get_labels_on_receipt",
        ]
        if isinstance(messages[-1], HumanMessage) and messages[-1].content.startswith(
            "You have gathered"
        ):
            return AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "submit_decision",
                        "args": {"verdict": "VALID", "confidence": 90, "reasoning": "enough"},
                        "id": "s1",
                        "type": "tool_call",
                    }
                ],
            )
        return AIMessage(
            content="",
            tool_calls=[{"name": names[done], "args": {}, "id": f"c{done}", "type": "tool_call"}],
        )

    model = ScriptedChatModel(responder=responder)
    result, run = run_agent(
        build_agent(seeded, RunConfig(models=RoleModels.given(model)), evidence_budget=3), r
    )
    assert result.run.tool_names == [
        "get_word_context",
        "search_similar_words",
        "check_edge_cases",
        "submit_decision",
    ]
    assert seen[-1][-1].content == DECIDE_NOW.format(n=3, submit="submit_decision")
    assert not any(
        isinstance(m, HumanMessage) and m.content.startswith("You have gathered")
        for m in run.messages
    )


def test_a_repeated_tool_call_is_answered_from_the_first(seeded, ref):
    r = ref("costco", 42, 3, "GRAND_TOTAL")
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("get_word_context"),
            call("submit_decision", verdict="VALID", confidence=90, reasoning="ok"),
        ]
    )
    _, run = run_agent(build_agent(seeded, RunConfig(models=RoleModels.given(model))), r)
    assert run.tool_calls[1].output.startswith("You already called get_word_context")


def test_the_agent_strategy_reuses_one_graph_across_words(seeded, monkeypatch):
    import casework.apps.receipts.agent as agent_module

    built = []
    original = agent_module.build_agent
    monkeypatch.setattr(
        agent_module, "build_agent", lambda *a, **kw: built.append(1) or original(*a, **kw)
    )
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("submit_decision", verdict="VALID", confidence=95, reasoning="a"),
            call("get_word_context"),
            call("submit_decision", verdict="INVALID", confidence=95, reasoning="b"),
        ]
    )
    deps = seeded.with_cache()
    config = RunConfig(models=RoleModels.given(model))
    words = [
        LabelInput(receipt="costco", line_id=42, word_id=3, suggested_label=label)
        for label in ("GRAND_TOTAL", "SUBTOTAL")
    ]
    a, b = (agent_strategy(w, deps, config) for w in words)
    assert (a.verdict, b.verdict) == ("VALID", "INVALID")
    assert a.run.model == b.run.model == "scripted" and a.run.run_id != b.run.run_id
    assert len(built) == 1


def test_a_run_under_an_override_names_that_model(seeded, tmp_path):
    """Under a model spec (``--model``, a request's ``model``) the decision names that spec,
    not the settings' model of the role (issue #20). The spec replays a scripted recording."""
    cassette = tmp_path / "agent.jsonl"
    scripted = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("submit_decision", verdict="VALID", confidence=93, reasoning="TOTAL line."),
        ]
    )
    word = LabelInput(receipt="costco", line_id=42, word_id=3, suggested_label="GRAND_TOTAL")
    recording = RoleModels.given(RecordingChatModel.wrap(scripted, cassette))
    recorded = agent_strategy(word, seeded, RunConfig(models=recording))
    spec = f"replay:{cassette}"
    replayed = agent_strategy(word, seeded, RunConfig.of(seeded.settings, spec))
    assert (recorded.run.model, replayed.run.model) == ("scripted", spec)
    assert replayed.verdict == recorded.verdict == "VALID"
    assert replayed.run.tool_names == ["get_word_context", "submit_decision"]


def test_system_prompt_carries_the_priority_order_and_the_threshold():
    prompt = render_system_prompt()
    order = [
        "get_word_context (PRIMARY)",
        "get_merchant_metadata (SECONDARY)",
        "search_similar_words (SUPPORTING)",
        "check_edge_cases",
        "get_all_labels_for_word",
        "get_labels_on_receipt",
    ]
    positions = [prompt.index(name) for name in order]
    assert positions == sorted(positions)
    assert "with confidence above 80 count as decisions" in prompt
    assert "NEEDS_REVIEW, confidence below 80" in prompt
    assert all(f"- {name}: " in prompt for name in LABEL_DEFINITIONS)
    assert "$" not in prompt.replace("$4", "")  # every template field was filled
    assert len(prompt) < 3600  # small-model budget: ~900 tokens


def test_task_prompt_is_compact(ref):
    task = render_task(ref("costco", 42, 3, "GRAND_TOTAL"))
    assert task.splitlines()[0] == 'Word: "303.83" (line 42, word 3)'
    assert len(task) < 400


def test_a_decision_before_the_primary_evidence_is_sent_back(seeded, ref):
    r = ref("wildfork", 12, 4, "UNIT_PRICE")
    model = ScriptedChatModel(
        steps=[
            call("submit_decision", verdict="VALID", confidence=90, reasoning="a guess"),
            call("get_word_context"),
            call(
                "submit_decision",
                verdict="INVALID",
                confidence=90,
                reasoning="the line makes it LINE_TOTAL",
            ),
        ]
    )
    result, run = run_agent(build_agent(seeded, RunConfig(models=RoleModels.given(model))), r)
    model.assert_exhausted()
    assert not run.tool_calls[0].ok and run.tool_calls[0].output.startswith(
        "Look at the evidence first"
    )
    assert (result.verdict, result.ended_by) == ("INVALID", EndReason.SUBMIT)
