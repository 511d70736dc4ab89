"""The evaluation contract: dataset, strategies, the spec's metrics, the plot."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from casework.apps.receipts import APP
from casework.apps.receipts.data.make_cases import build_bundled_cases
from casework.apps.receipts.dataset import CASES_PATH
from casework.apps.receipts.evalsuite import (
    eval_deps,
    plot_confidence,
    receipts_metrics,
    setup,
    user_cases,
)
from casework.apps.receipts.strategies import STRATEGIES
from casework.errors import InputError
from casework.evals import EvalConfig, run_suite
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite
from casework.llm import ScriptedChatModel, call
from casework.runtime.decision import EndReason, RunInfo, ToolCallRecord
from casework.runtime.usage import Usage


def test_dataset_file_is_current_and_balanced():
    on_disk = [json.loads(line) for line in CASES_PATH.read_text().splitlines()]
    assert on_disk == build_bundled_cases(), (
        "run `python -m casework.apps.receipts.data.make_cases`"
    )
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
    # the third-party receipts' cases carry the gold-label audit's verdict; ours carry none
    audited = Counter(c["metadata"].get("gold_audit") for c in on_disk)
    assert audited == {"right": 648, "wrong": 282, "unsure": 42, None: 534}
    change = next(c for c in on_disk if c["id"] == "cvs-L17-W2-WEBSITE")
    assert change["inputs"]["word"] == ".00" and change["metadata"]["gold_audit"] == "wrong"
    first20 = Counter(c["expected"]["verdict"] for c in on_disk[:20])
    assert min(first20.values()) >= 5  # `--limit 20` sees both answers


def test_suite_contract():
    suite = APP.eval_suite()
    assert isinstance(suite, EvalSuite)
    assert suite.app == "receipts" and suite.dataset == CASES_PATH
    # the harness runs the very functions the CLI and the API call
    assert dict(suite.strategies) == STRATEGIES == dict(APP.strategies())
    assert suite.verdict_field == "verdict" and suite.raw_verdict_field == "raw_verdict"
    assert suite.labels == ["VALID", "INVALID", "NEEDS_REVIEW"] and suite.setup is not None
    assert suite.targets["false_negative_rate_max"] <= 0.1
    assert [o.name for o in suite.options] == ["receipts"]
    case = EvalCase("c", {"receipt": "x#1", "line_id": 1, "word_id": 2, "suggested_label": "TAX"})
    assert suite.strategy_input(case).blind is True  # every case runs blind


@pytest.fixture(scope="module")
def eval_store(seeded_settings):
    setup(seeded_settings)
    setup(seeded_settings)  # idempotent
    deps = eval_deps(seeded_settings)
    assert len(deps.repo.list_receipts()) == 12
    return seeded_settings


def test_baseline_through_the_harness(eval_store, tmp_path):
    run = run_suite(
        APP.eval_suite(),
        EvalConfig(
            strategy="baseline",
            limit=30,
            settings=eval_store,
            out_dir=tmp_path / "run",
            progress=False,
            store=False,
        ),
    )
    m = run.metrics
    assert m["errors"] == 0 and m["cases"] == 30
    print(
        {
            k: m[k]
            for k in (
                "verdict_accuracy",
                "validation_success_rate",
                "needs_review_rate",
                "false_positive_rate",
                "false_negative_rate",
                "tool_calls_per_decision",
            )
        }
    )
    assert m["seconds_per_decision"] < 5
    first = run.cases[0]
    assert first.output["raw_verdict"] in ("VALID", "INVALID", "NEEDS_REVIEW")
    assert first.ended_by == "rules" and first.tool_calls[0]["name"] == "check_edge_cases"
    plot = tmp_path / "run" / "plots" / "confidence.png"
    assert run.details["plots"] == ["plots/confidence.png"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "App figures" in (tmp_path / "run" / "report.html").read_text()


def test_agent_through_the_harness_with_per_case_models(eval_store):
    models: dict[str, ScriptedChatModel] = {}

    def model_for(case_id: str, role: str) -> ScriptedChatModel:
        assert role == "specialist"
        models[case_id] = ScriptedChatModel(
            steps=[
                call("get_word_context"),
                call("submit_decision", verdict="VALID", confidence=88, reasoning="scripted"),
            ]
        )
        return models[case_id]

    run = run_suite(
        APP.eval_suite(),
        EvalConfig(
            strategy="agent",
            limit=2,
            base_model=model_for,
            settings=eval_store,
            progress=False,
            store=False,
            report=False,
            concurrency=2,
        ),
    )
    assert [c.verdict for c in run.cases] == ["VALID", "VALID"] and run.metrics["errors"] == 0
    assert run.config["strategy_model"] == "scripted"
    for case in run.cases:
        assert [t["name"] for t in case.tool_calls] == ["get_word_context", "submit_decision"]
        assert case.ended_by == "submit" and case.domain["tool_calls_per_decision"] == 2
        # blind: the word's own labels are hidden from the tools
        word = json.dumps(case.inputs["word"])
        assert f'"word":{word}' in case.tool_calls[0]["output"]
        models[case.case_id].assert_exhausted()


def test_metric_definitions_follow_the_spec():
    right = EvalCase(id="a", inputs={}, expected={"verdict": "VALID"})
    wrong = EvalCase(id="b", inputs={}, expected={"verdict": "INVALID"})

    def out(v):
        calls = [ToolCallRecord("x", {}, "1"), ToolCallRecord("y", {}, "2")]
        run = RunInfo(ended_by=EndReason.RULES, tool_calls=calls, usage=Usage(wall_seconds=1.5))
        return CaseOutput(output={"verdict": v, "confidence": 90}, run=run)

    # the spec names them from the label's side: a valid label marked INVALID is a false positive
    assert receipts_metrics(right, out("INVALID"))["false_positive_rate"] == 1.0
    assert receipts_metrics(wrong, out("VALID"))["false_negative_rate"] == 1.0
    assert receipts_metrics(right, out("VALID"))["validation_success_rate"] == 1.0
    assert receipts_metrics(wrong, out("VALID"))["validation_success_rate"] is None
    assert receipts_metrics(wrong, out("NEEDS_REVIEW"))["needs_review_rate"] == 1.0
    assert receipts_metrics(wrong, out("NEEDS_REVIEW"))["decided_accuracy"] is None
    assert receipts_metrics(right, out("VALID"))["tool_calls_per_decision"] == 2
    assert receipts_metrics(right, out("VALID"))["seconds_per_decision"] == 1.5


def test_cases_from_the_users_imported_receipts(small):
    cases = user_cases(small.settings, ["chevron"])
    assert cases and all(c.id.startswith("chevron-") for c in cases)
    assert {c.expected["verdict"] for c in cases} == {"VALID", "INVALID"}
    assert len(user_cases(small.settings, None)) > len(cases)  # all four receipts
    with pytest.raises(InputError, match="No receipt 'nosuch'"):
        user_cases(small.settings, ["nosuch"])
    suite = APP.eval_suite()
    chosen = suite.cases(small.settings, {"receipts": ["chevron"]})
    run = run_suite(
        suite,
        EvalConfig(
            strategy="baseline",
            cases=chosen,
            settings=small.settings,
            progress=False,
            store=False,
            report=False,
        ),
    )
    # the run read the working store (the cases' words are found there)
    assert run.metrics["errors"] == 0 and run.metrics["cases"] == len(cases)


def test_confidence_plot(tmp_path):
    class Case:
        def __init__(self, confidence, correct):
            self.confidence, self.correct = confidence, correct

    class Run:
        strategy = "baseline"
        cases = [Case(0.5, True), Case(0.95, False), Case(1.0, True), Case(None, None)]

    path = plot_confidence(Run(), tmp_path / "plots")
    assert path == tmp_path / "plots" / "confidence.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    Run.cases = [Case(None, None)]
    assert plot_confidence(Run(), tmp_path / "none") is None
