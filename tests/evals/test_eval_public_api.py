"""The public surface of casework.evals, pinned: a change here is a change of contract."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "casework.evals": [
        "CaseOutput",
        "CaseResult",
        "Comparison",
        "EvalCase",
        "EvalRun",
        "EvalSuite",
        "StrategyOptions",
        "TargetResult",
        "TokenBucket",
        "arun_suite",
        "check_targets",
        "compare_runs",
        "dump_dataset",
        "is_transient",
        "list_runs",
        "load_dataset",
        "load_run",
        "mcnemar_exact",
        "render_html",
        "report_json",
        "run_suite",
        "save_run",
        "score_case",
        "summarize",
        "write_report",
    ],
    "casework.evals.suite": [
        "CaseOutput",
        "EvalCase",
        "EvalSuite",
        "Evaluator",
        "Strategy",
        "StrategyFactory",
        "StrategyOptions",
    ],
    "casework.evals.datasets": [
        "dataset_digest",
        "dataset_summary",
        "dump_dataset",
        "load_dataset",
        "parse_case",
        "resolve_dataset",
    ],
    "casework.evals.evaluators": [
        "CalibrationReport",
        "ClassificationReport",
        "Judgement",
        "ReliabilityBin",
        "ToolChoice",
        "TrajectoryScores",
        "ajudge",
        "calibration_report",
        "case_efficiency",
        "circular_calls",
        "classification_report",
        "classify_trajectory",
        "cohen_kappa",
        "confusion_matrix",
        "edit_distance",
        "efficiency_summary",
        "evaluate_trajectory",
        "expected_calibration_error",
        "field_match",
        "judge",
        "judge_agreement",
        "match_trajectory",
        "normalize_confidence",
        "redundant_calls",
        "reliability_bins",
        "self_corrections",
        "tool_choice",
        "values_match",
    ],
    "casework.evals.runner": [
        "DEFAULT_RATE_LIMITS",
        "JUDGE_ROLE",
        "ModelSource",
        "TokenBucket",
        "arun_suite",
        "case_filename",
        "is_transient",
        "provider_of",
        "run_suite",
    ],
    "casework.evals.store": [
        "CaseRow",
        "RunRow",
        "RunSummary",
        "delete_run",
        "list_runs",
        "load_run",
        "resolve_run_id",
        "save_run",
    ],
    "casework.evals.report": [
        "REPORT_SCHEMA",
        "format_metric",
        "metric_label",
        "render_case_html",
        "render_html",
        "report_json",
        "write_report",
    ],
    "casework.evals.compare": [
        "CaseDiff",
        "Comparison",
        "McNemar",
        "compare_runs",
        "mcnemar_exact",
        "render_compare_html",
    ],
    "casework.evals.metrics": ["TIMING_METRICS", "check_targets", "score_case", "summarize"],
    "casework.evals.results": ["CaseResult", "EvalRun", "TargetResult"],
    "casework.evals.cli": ["app", "build_app"],
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_all_is_pinned_and_importable(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(PUBLIC[module_name])
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_unknown_attribute() -> None:
    import casework.evals

    with pytest.raises(AttributeError):
        casework.evals.nothing_here  # noqa: B018


def test_suite_contract_is_extended_compatibly(tmp_path) -> None:
    from casework.evals import EvalSuite

    suite = EvalSuite(
        app="a", dataset=tmp_path / "d.jsonl", strategies={}, default_strategy="s", labels=["X"]
    )
    assert suite.verdict_field == "verdict" and suite.confidence_field == "confidence"
    assert (
        suite.evaluators == []
        and suite.targets == {}
        and suite.judge_rubric is None
        and suite.setup is None
    )
    assert suite.datasets == {} and suite.match_fields is None and suite.confidence_scale == 100.0
    assert suite.submit_tool == "submit_decision"
