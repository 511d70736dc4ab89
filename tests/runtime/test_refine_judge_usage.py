"""Refinement loop, LLM judge and usage accounting."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from casework.llm import ScriptedChatModel, call
from casework.runtime.judge import LLMJudge
from casework.runtime.refine import Check, build_refinement_loop
from casework.runtime.usage import Usage, price_for


def test_refinement_loop_uses_feedback_until_valid():
    seen_feedback = []

    def generate(request, feedback):
        seen_feedback.append(feedback)
        return f"{request}-v{len(seen_feedback)}"

    def validate(candidate, request):
        return Check(
            ok=candidate.endswith("v3"),
            errors=[] if candidate.endswith("v3") else [f"{candidate} is wrong"],
        )

    loop = build_refinement_loop(
        generate=generate,
        validate=validate,
        summarize=lambda errs: "fix: " + "; ".join(errs),
        max_attempts=5,
    )
    out = loop.invoke({"request": "x"})
    assert out["status"] == "accepted" and out["candidate"] == "x-v3" and out["attempts"] == 3
    assert seen_feedback == ["", "fix: x-v1 is wrong", "fix: x-v2 is wrong"]
    assert [h["valid"] for h in out["history"]] == [False, False, True]


def test_refinement_loop_stops_at_the_cap_and_evaluates():
    loop = build_refinement_loop(
        generate=lambda r, f: "same",
        validate=lambda c, r: Check(ok=True),
        evaluate=lambda c, r: Check(ok=False, errors=["too vague"], score=0.3),
        max_attempts=2,
    )
    out = loop.invoke({"request": "x"})
    assert out["status"] == "max_attempts" and out["attempts"] == 2
    assert [h["score"] for h in out["history"]] == [0.3, 0.3]


def test_judge_scores_through_a_tool_call_and_respects_its_cap():
    model = ScriptedChatModel(
        steps=[call("submit_judgement", score=0.8, passed=True, reasoning="good")] * 3
    )
    judge = LLMJudge(model, "Is the SQL correct?", max_calls=2)
    v = judge.judge("count users", "SELECT COUNT(*) FROM users")
    assert v.score == 0.8 and v.passed
    assert judge.judge("a", "b") is not None
    assert judge.judge("a", "b") is None  # over the cap: skipped, never an exception
    assert model.calls == 2


def test_judge_returns_none_on_unusable_output():
    judge = LLMJudge(ScriptedChatModel(steps=[AIMessage("I refuse")]), "r")
    assert judge.judge("a", "b") is None


def test_prices_and_usage_addition():
    assert price_for("openai:gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert price_for("gpt-4o") == (2.50, 10.00)
    assert price_for("mystery-model") is None
    a, b = (
        Usage(model_calls=1, input_tokens=10, cost_usd=0.5),
        Usage(model_calls=2, output_tokens=5, cost_usd=None),
    )
    a.add(b)
    assert a.model_calls == 3 and a.total_tokens == 15 and a.cost_usd is None


def test_cost_budget_with_a_priced_model():
    from casework.config import Limits
    from casework.runtime.react import ReactAgent
    from casework.smoke import SYSTEM, OrderRef, SmokeDecision, get_customer, get_order_status

    model = ScriptedChatModel(steps=[call("get_order_status")] * 5, model_name="gpt-4o")
    agent_limits = Limits(max_model_calls=10, max_cost_usd=0.0000001)
    agent = ReactAgent(
        model=model,
        tools=[get_order_status, get_customer],
        decision_model=SmokeDecision,
        system_prompt=SYSTEM,
        context_schema=OrderRef,
        limits=agent_limits,
    )
    result = agent.run("check the order", context=OrderRef(), trace=False)
    assert result.ended_by == "budget:cost" and result.decision.verdict == "NEEDS_REVIEW"
    assert result.usage.cost_usd and result.usage.cost_usd > 0
