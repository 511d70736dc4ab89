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
        "EvalConfig",
        "SuiteOption",
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
        "Plot",
        "Strategy",
        "SuiteOption",
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
    "casework.evals.runner": ["EvalConfig", "arun_suite", "as_case_output", "run_suite"],
    "casework.evals.evalconfig": ["CaseHook", "EvalConfig"],
    "casework.evals.learning": [
        "REVIEWER",
        "SPOT_CHECK",
        "Learner",
        "LearningRun",
        "deps_memory",
        "example_or_reason",
        "isolated_store",
        "run_learning",
    ],
    "casework.evals.learning_curve": [
        "case_score",
        "curve_rows",
        "learning_section",
        "learning_summary",
        "parts_of",
        "print_learning",
    ],
    "casework.evals.ratelimit": ["DEFAULT_RATE_LIMITS", "TokenBucket", "provider_of"],
    "casework.evals.retries": ["backoff_seconds", "is_transient", "one_line"],
    "casework.evals.cassettes": [
        "JUDGE_ROLE",
        "BaseModelFactory",
        "CaseModels",
        "case_filename",
        "replay_source",
    ],
    "casework.evals.calibrate": [
        "add_calibration",
        "calibrate_cascade",
        "calibrate_run",
        "calibration_pairs",
    ],
    "casework.evals.layer_report": [
        "asked_model",
        "cascade_summary",
        "decided",
        "layer_names",
        "layer_outcomes",
    ],
    "casework.evals.traces": ["keep_trace"],
    "casework.evals.formatting": ["HEADLINE", "format_metric", "metric_label"],
    "casework.evals.html": ["css", "e", "json_block", "page", "percent", "pill", "table"],
    "casework.evals.casepages": ["case_href", "render_case_html"],
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
        "draw_plots",
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
    "casework.evals.runs_cli": [
        "calibrate_cmd",
        "compare_cmd",
        "delete_cmd",
        "errored_cases",
        "list_cmd",
        "print_json",
        "print_run",
        "run_summary",
        "show_cmd",
        "validate_cmd",
    ],
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_all_is_pinned_and_each_name_is_defined_once(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(PUBLIC[module_name])
    for name in module.__all__:
        value = getattr(module, name)
        home = getattr(value, "__module__", None)
        # a re-export is the very object of the module that defines it (no copies, no shims)
        if home and home.startswith("casework.") and home != module_name:
            assert getattr(importlib.import_module(home), name) is value, (module_name, name)


def test_unknown_attribute() -> None:
    import casework.evals

    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        casework.evals.nothing_here  # noqa: B018


def test_a_case_becomes_the_strategy_input_the_suite_declares(tmp_path) -> None:
    from pydantic import BaseModel

    from casework.evals import EvalCase, EvalSuite

    class WordInput(BaseModel):
        word: str
        label: str

    case = EvalCase("c1", {"word": "apple", "label": "FRUIT", "extra": 1})
    suite = EvalSuite(
        app="a", dataset=tmp_path / "d.jsonl", strategies={}, default_strategy="s", labels=["X"]
    )
    assert suite.strategy_input(case) == {"word": "apple", "label": "FRUIT", "extra": 1}
    assert suite.strategy_input(case) is not case.inputs  # a strategy cannot edit the case
    suite.input_model = WordInput
    assert suite.strategy_input(case) == WordInput(word="apple", label="FRUIT")
    suite.input_model = lambda c: (c.id, c.inputs["word"])
    assert suite.strategy_input(case) == ("c1", "apple")


def test_every_cli_run_option_reaches_the_run_config() -> None:
    import dataclasses

    from casework.evals.cli import RUN_OPTIONS, run_config
    from casework.evals.evalconfig import EvalConfig

    values = {p.name: p.default.default for p in RUN_OPTIONS}
    values.update(strategy="agent", limit=3, concurrency=2, rate=5.0, model="openai:gpt-4o-mini")

    class _Models:
        default = "local:x"

    class _Settings:
        models = _Models()

    config = run_config(values, _Settings())
    assert isinstance(config, EvalConfig)
    assert (config.strategy, config.limit, config.concurrency) == ("agent", 3, 2)
    assert config.rate_limits is not None and config.rate_limits["openai"] == 5.0
    assert config.progress is not False and config.calibrate is False
    names = {f.name for f in dataclasses.fields(EvalConfig)}
    # options the CLI does not offer are the programmatic ones
    # (--learn and --spot-check choose run_learning, which runs two such configs)
    cli_only = {"as_json", "out", "rate", "check", "learn", "spot_check"}
    assert {p.name for p in RUN_OPTIONS} - cli_only <= names
