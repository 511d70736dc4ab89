"""Evaluation harness: datasets, runner, evaluators, reports, stored runs and A/B comparison.

An app hands the harness an ``EvalSuite`` (its dataset, the strategies its spec registers,
how a case becomes a strategy's input and how the run's deps are built, verdict labels,
domain evaluators, plots and targets); ``run_suite(suite, EvalConfig(...))`` does the rest.
Evaluators live in ``casework.evals.evaluators`` as plain functions. Every name loads its module on
first use, so ``casework --help`` stays quick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import lazy_names

if TYPE_CHECKING:
    from casework.evals.compare import Comparison, compare_runs, mcnemar_exact
    from casework.evals.datasets import dump_dataset, load_dataset
    from casework.evals.evalconfig import EvalConfig
    from casework.evals.metrics import check_targets, score_case, summarize
    from casework.evals.ratelimit import TokenBucket
    from casework.evals.report import render_html, report_json, write_report
    from casework.evals.results import CaseResult, EvalRun, TargetResult
    from casework.evals.retries import is_transient
    from casework.evals.runner import arun_suite, run_suite
    from casework.evals.store import list_runs, load_run, save_run
    from casework.evals.suite import CaseOutput, EvalCase, EvalSuite, SuiteOption

__all__ = [
    "CaseOutput",
    "CaseResult",
    "Comparison",
    "EvalCase",
    "EvalConfig",
    "EvalRun",
    "EvalSuite",
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
]

_LAZY = {
    "dump_dataset": "datasets",
    "load_dataset": "datasets",
    "EvalConfig": "evalconfig",
    "CaseResult": "results",
    "EvalRun": "results",
    "TargetResult": "results",
    "CaseOutput": "suite",
    "EvalCase": "suite",
    "EvalSuite": "suite",
    "SuiteOption": "suite",
    "Comparison": "compare",
    "compare_runs": "compare",
    "mcnemar_exact": "compare",
    "check_targets": "metrics",
    "score_case": "metrics",
    "summarize": "metrics",
    "render_html": "report",
    "report_json": "report",
    "write_report": "report",
    "TokenBucket": "ratelimit",
    "arun_suite": "runner",
    "is_transient": "retries",
    "run_suite": "runner",
    "list_runs": "store",
    "load_run": "store",
    "save_run": "store",
}

__getattr__ = lazy_names("casework.evals", _LAZY)
