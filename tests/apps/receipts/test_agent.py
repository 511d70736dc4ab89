"""Scripted runs of the validation agent: tools, policy, limits, the evidence budget, prompts."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from casework.apps.receipts.agent import (
    build_agent,
    render_system_prompt,
    render_task,
    run_agent,
)
from casework.apps.receipts.models import LABEL_DEFINITIONS
from casework.apps.receipts.service import AgentValidator
from casework.llm import ScriptedChatModel, call, say
from casework.runtime.middleware import DECIDE_NOW


def test_scripted_run_validates_and_records_the_trajectory(seeded, ref):
    r = ref("costco", 42, 3, "GRAND_TOTAL", reason="suggested by the harmoniser")
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("get_merchant_metadata"),
            call(
                "submit_decision",
                decision="VALID",
                confidence=93,
                reasoning="TOTAL line, right column.",
            ),
        ]
    )
    result, run = run_agent(build_agent(seeded, model), r, trace=False)
    model.assert_exhausted()
    assert (result.decision, result.confidence, result.policy_applied) == ("VALID", 93, False)
    assert result.tool_calls == ["get_word_context", "get_merchant_metadata", "submit_decision"]
    assert (
        result.strategy == "agent" and result.ended_by == "submit" and result.word_text == "303.83"
    )
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
                decision="INVALID",
                confidence=72,
                reasoning="Probably the total.",
            ),
        ]
    )
    result, _ = run_agent(build_agent(seeded, model), r, trace=False)
    assert (result.decision, result.raw_decision, result.policy_applied) == (
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
    result, _ = run_agent(build_agent(seeded, model), r, trace=False)
    assert (result.decision, result.confidence) == ("NEEDS_REVIEW", 0)
    assert result.ended_by == "no_decision"


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
                        "args": {"decision": "VALID", "confidence": 90, "reasoning": "enough"},
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
    result, run = run_agent(build_agent(seeded, model, evidence_budget=3), r, trace=False)
    assert result.tool_calls == [
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
            call("submit_decision", decision="VALID", confidence=90, reasoning="ok"),
        ]
    )
    _, run = run_agent(build_agent(seeded, model), r, trace=False)
    assert run.tool_calls[1].output.startswith("You already called get_word_context")


def test_agent_validator_reuses_one_graph_across_words(seeded, ref):
    model = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("submit_decision", decision="VALID", confidence=95, reasoning="a"),
            call("get_word_context"),
            call("submit_decision", decision="INVALID", confidence=95, reasoning="b"),
        ]
    )
    v = AgentValidator(seeded, model, model_spec="scripted:test")
    a = v.validate(ref("costco", 42, 3, "GRAND_TOTAL"))
    b = v.validate(ref("costco", 42, 3, "SUBTOTAL"))
    assert (a.decision, b.decision) == ("VALID", "INVALID") and a.model == "scripted:test"


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
            call("submit_decision", decision="VALID", confidence=90, reasoning="a guess"),
            call("get_word_context"),
            call(
                "submit_decision",
                decision="INVALID",
                confidence=90,
                reasoning="the line makes it LINE_TOTAL",
            ),
        ]
    )
    result, run = run_agent(build_agent(seeded, model), r, trace=False)
    model.assert_exhausted()
    assert not run.tool_calls[0].ok and run.tool_calls[0].output.startswith(
        "Look at the evidence first"
    )
    assert (result.decision, result.ended_by) == ("INVALID", "submit")
