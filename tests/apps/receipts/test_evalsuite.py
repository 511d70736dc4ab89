"""The evaluation contract: dataset, strategies, the spec's metrics, the plot."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections import Counter

import pytest

from casework.apps.receipts import APP
from casework.apps.receipts.dataset import CASES_PATH, build_bundled_cases
from casework.apps.receipts.evalsuite import (
    eval_deps,
    load_cases,
    plot_confidence,
    receipts_metrics,
    setup,
    summarize,
)
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite, StrategyOptions
from casework.llm import ScriptedChatModel, call


def test_dataset_file_is_current_and_balanced():
    on_disk = [json.loads(line) for line in CASES_PATH.read_text().splitlines()]
    assert on_disk == build_bundled_cases(), "run `python -m casework.apps.receipts.dataset`"
    assert len(on_disk) == 1506
    verdicts = Counter(c["expected"]["verdict"] for c in on_disk)
    assert set(verdicts) == {"VALID", "INVALID"} and min(verdicts.values()) > 0.4 * len(on_disk)
    kinds = Counter(c["metadata"]["kind"] for c in on_disk)
    assert kinds == {"gold": 753, "confusion": 753}
    pairs = {c["metadata"]["pair"] for c in on_disk}
    assert {
        "UNIT_PRICE->LINE_TOTAL",
        "LINE_TOTAL->UNIT_PRICE",
        "SUBTOTAL->GRAND_TOTAL",
        "GRAND_TOTAL->SUBTOTAL",
        "MERCHANT_NAME->PRODUCT_NAME",
        "PRODUCT_NAME->MERCHANT_NAME",
    } <= pairs
    assert len({c["id"] for c in on_disk}) == len(on_disk)
    first20 = Counter(c["expected"]["verdict"] for c in on_disk[:20])
    assert min(first20.values()) >= 5  # `--limit 20` sees both answers


def test_suite_contract():
    suite = APP.eval_suite()
    assert isinstance(suite, EvalSuite)
    assert (
        suite.app == "receipts"
        and suite.dataset == CASES_PATH
        and set(suite.strategies) == {"baseline", "agent"}
    )
    assert suite.verdict_field == "verdict" and suite.confidence_field == "confidence"
    assert suite.labels == ["VALID", "INVALID", "NEEDS_REVIEW"] and suite.setup is not None
    assert suite.targets["false_negative_rate_max"] <= 0.1


@pytest.fixture(scope="module")
def eval_store(seeded_settings):
    setup(seeded_settings)
    setup(seeded_settings)  # idempotent
    deps = eval_deps(seeded_settings)
    assert len(deps.repo.list_receipts()) == 12
    return seeded_settings


def test_baseline_strategy_and_metrics(eval_store):
    suite = APP.eval_suite()
    run = suite.strategies["baseline"](StrategyOptions(settings=eval_store))
    cases = load_cases(limit=30)
    outputs = [run(c) for c in cases]
    assert all(isinstance(o, CaseOutput) and o.output["verdict"] in suite.labels for o in outputs)
    assert all(0 <= o.output["confidence"] <= 100 for o in outputs)
    summary = summarize(cases, outputs)
    for key in (
        "verdict_accuracy",
        "validation_success_rate",
        "needs_review_rate",
        "false_positive_rate",
        "false_negative_rate",
        "tool_calls_per_decision",
        "seconds_per_decision",
    ):
        assert summary[key] is not None, key
    assert sum(summary["confidence_histogram"].values()) == 30
    assert summary["verdict_accuracy"] > 0.4  # the baseline is weak, not broken


def test_agent_strategy_with_per_case_models(eval_store, tmp_path):
    suite = APP.eval_suite()
    models = {}

    def model_for(case_id: str, role: str):
        assert role == "specialist"
        models[case_id] = ScriptedChatModel(
            steps=[
                call("get_word_context"),
                call("submit_decision", decision="VALID", confidence=88, reasoning="scripted"),
            ]
        )
        return models[case_id]

    run = suite.strategies["agent"](
        StrategyOptions(model="scripted:x", settings=eval_store, model_for=model_for)
    )
    assert inspect.iscoroutinefunction(run)
    case = load_cases(limit=1)[0]
    out = asyncio.run(run(case))
    assert out.output["verdict"] == "VALID" and out.output["model"] == "scripted:x"
    assert out.run is not None and out.run.tool_names == ["get_word_context", "submit_decision"]
    # blind: the word's own labels are hidden from the tools
    ctx = json.loads(out.run.tool_calls[0].output)
    assert ctx["word"] == case.inputs["word"]
    models[case.id].assert_exhausted()


def test_metric_definitions_follow_the_spec():
    right = EvalCase(id="a", inputs={}, expected={"verdict": "VALID"})
    wrong = EvalCase(id="b", inputs={}, expected={"verdict": "INVALID"})

    def out(v):
        return CaseOutput(
            output={"verdict": v, "confidence": 90, "tool_calls": ["x", "y"], "seconds": 1.5}
        )

    assert (
        receipts_metrics(right, out("INVALID"))["false_positive_rate"] == 1.0
    )  # valid label marked INVALID
    assert (
        receipts_metrics(wrong, out("VALID"))["false_negative_rate"] == 1.0
    )  # invalid label marked VALID
    assert receipts_metrics(right, out("VALID"))["validation_success_rate"] == 1.0
    assert receipts_metrics(wrong, out("VALID"))["validation_success_rate"] is None
    assert receipts_metrics(wrong, out("NEEDS_REVIEW"))["needs_review_rate"] == 1.0
    assert receipts_metrics(right, out("VALID"))["tool_calls_per_decision"] == 2
    s = summarize([right, wrong, right], [out("VALID"), out("VALID"), out("NEEDS_REVIEW")])
    assert (s["validation_success_rate"], s["false_negative_rate"], s["needs_review_rate"]) == (
        0.5,
        1.0,
        0.3333,
    )
    assert s["targets"]["false_negative_rate_max"]["met"] is False


def test_confidence_plot(tmp_path):
    path = plot_confidence({"baseline": [50, 95, 100], "agent": [85, 90]}, tmp_path / "conf.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
