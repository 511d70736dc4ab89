"""Efficiency summaries and the LLM judge (scripted), with kappa on known tables."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage

from casework.errors import ModelError
from casework.evals.evaluators.efficiency import case_efficiency, efficiency_summary, percentile
from casework.evals.evaluators.judge import (
    JUDGE_TOOL,
    ajudge,
    cohen_kappa,
    default_rubric,
    judge,
    judge_agreement,
    judge_messages,
    parse_judgement,
)
from casework.evals.suite import EvalCase
from casework.llm.scripted import ScriptedChatModel, call, say
from casework.runtime.usage import Usage


def test_case_efficiency_from_usage_and_dict() -> None:
    usage = Usage(
        model_calls=3,
        tool_calls=2,
        input_tokens=100,
        output_tokens=20,
        wall_seconds=1.5,
        cost_usd=None,
    )
    row = case_efficiency(usage, wall_seconds=2.0)
    assert row == {
        "model_calls": 3,
        "tool_calls": 2,
        "input_tokens": 100,
        "output_tokens": 20,
        "total_tokens": 120,
        "wall_seconds": 2.0,
        "cost_usd": None,
    }
    assert case_efficiency({"model_calls": 1, "cost_usd": 0.01})["cost_usd"] == 0.01
    assert case_efficiency(None)["cost_usd"] is None


def test_efficiency_summary_cost_per_thousand_and_percentiles() -> None:
    rows = [
        {
            "model_calls": 2,
            "tool_calls": 1,
            "total_tokens": 100,
            "wall_seconds": 1.0,
            "cost_usd": 0.002,
        },
        {
            "model_calls": 4,
            "tool_calls": 3,
            "total_tokens": 300,
            "wall_seconds": 3.0,
            "cost_usd": 0.004,
        },
        {
            "model_calls": 3,
            "tool_calls": 2,
            "total_tokens": 200,
            "wall_seconds": 2.0,
            "cost_usd": None,
        },
    ]
    s = efficiency_summary(rows)
    assert (
        s["model_calls_mean"] == 3 and s["tool_calls_total"] == 6 and s["total_tokens_mean"] == 200
    )
    assert s["wall_seconds_p50"] == 2.0 and s["wall_seconds_p95"] == pytest.approx(2.9)
    assert s["cost_known"] == 2 and s["cost_total"] == pytest.approx(0.006)
    assert s["cost_per_case"] == pytest.approx(0.003) and s["cost_per_1k"] == pytest.approx(3.0)
    assert efficiency_summary([{"cost_usd": None}])["cost_per_1k"] is None
    assert percentile([], 50) is None


CASE = EvalCase(
    "c1", {"word": "apple", "label": "FRUIT"}, {"verdict": "VALID", "tools": ["lookup"]}
)


def test_judge_scores_through_its_tool_and_sees_rubric_case_and_output() -> None:
    seen: list[str] = []

    def responder(messages, tools):
        seen.extend([str(m.content) for m in messages])
        assert tools == [JUDGE_TOOL]
        return call(JUDGE_TOOL, score=0.8, rationale="Right verdict, thin reasoning.")

    j = judge(
        ScriptedChatModel(responder=responder),
        "Reasoning must cite the category.",
        CASE,
        {"verdict": "VALID", "reasoning": "apple is a fruit"},
    )
    assert j.score == 0.8 and j.rationale.startswith("Right verdict")
    prompt = seen[-1]
    assert "Reasoning must cite the category." in prompt and '"word": "apple"' in prompt
    assert '"verdict": "VALID"' in prompt and "apple is a fruit" in prompt
    assert '"tools"' not in prompt  # trajectory references are not the judge's business
    assert JUDGE_TOOL in seen[0]


def test_async_judge_and_text_fallback() -> None:
    model = ScriptedChatModel(steps=[say('I think {"score": 0.25, "rationale": "weak"} fits.')])
    j = asyncio.run(ajudge(model, default_rubric(), CASE, {"verdict": "INVALID"}))
    assert j.score == 0.25


@pytest.mark.parametrize(
    "message",
    [say("no idea"), call(JUDGE_TOOL, score=3, rationale="out of range"), say('{"score": "high"}')],
)
def test_unusable_judgements_raise_model_error(message: AIMessage) -> None:
    with pytest.raises(ModelError, match="judge"):
        parse_judgement(message)


def test_judge_prompt_truncates_huge_outputs() -> None:
    messages = judge_messages("r", CASE, {"blob": "x" * 20000})
    assert "(truncated)" in str(messages[-1].content) and len(str(messages[-1].content)) < 8000


def test_cohen_kappa_known_values() -> None:
    # po = 0.75, pa = 0.5, pb = 0.25, pe = 0.5 -> kappa = 0.5
    assert cohen_kappa([True, True, False, False], [True, False, False, False]) == pytest.approx(
        0.5
    )
    assert cohen_kappa([True, False], [True, False]) == 1.0
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)
    assert cohen_kappa([True, True], [True, True]) == 1.0  # chance agreement certain
    assert cohen_kappa([True, True], [False, False]) == 0.0
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa([True], [])


def test_judge_agreement_table() -> None:
    a = judge_agreement([True, True, False, False, True], [True, False, False, True, True])
    assert a == {
        "n": 5,
        "agreement": 0.6,
        "kappa": pytest.approx(1 / 6),
        "both_pass": 2,
        "both_fail": 1,
        "judge_only": 1,
        "deterministic_only": 1,
    }
