"""The contract between an app and the evaluation harness.

An app's ``AppSpec.eval_suite()`` returns an ``EvalSuite``: its dataset, the strategies it
registered (plain functions ``run(input, deps, config) -> Decision``, the same ones the CLI
and the API call), how a case becomes a strategy's input (``input_model``), how the deps of a
run are built (``deps(settings)``, once per run), which output field holds the verdict, its
domain evaluators, plots and targets. The runner does the rest (concurrency, retries, traces,
storage, reports).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel

from casework.evals.results import CaseResult
from casework.runtime.decision import RunInfo
from casework.runtime.strategy import Strategy
from casework.runtime.usage import Usage

__all__ = [
    "CaseOutput",
    "EvalCase",
    "EvalSuite",
    "Evaluator",
    "Plot",
    "Strategy",
    "SuiteOption",
]


@dataclass
class EvalCase:
    """One line of a JSONL dataset."""

    id: str
    inputs: dict[str, Any]
    expected: dict[str, Any] = field(default_factory=dict)
    """Expected outputs; may hold ``tools`` (reference tool names, in order) for trajectories."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Scenario type, complexity, tags, ..."""


@dataclass
class CaseOutput:
    """What a strategy produced for one case, as the evaluators see it."""

    output: dict[str, Any]
    """The decision as plain data (``{"verdict": "VALID", "confidence": 92, ...}``)."""
    run: RunInfo | None = None
    """How the decision was reached (``decision.run``): tool calls, usage, ended_by, trace."""

    @property
    def usage(self) -> Usage | None:
        usage = self.run.usage if self.run is not None else None
        return usage if isinstance(usage, Usage) else None


Evaluator = Callable[[EvalCase, CaseOutput], dict[str, float | int | str | None]]
"""A domain evaluator: per-case scores; the runner averages numeric ones across cases."""

Plot = Callable[[Any, Path], Path | None]
"""``plot(run, folder) -> image path``: an app's figure for the report (``run`` is an EvalRun)."""


@dataclass(frozen=True)
class SuiteOption:
    """An app-specific option of ``casework eval APP`` (a repeatable ``--name VALUE``).

    The values reach ``EvalSuite.cases(settings, options)`` under ``name``."""

    name: str
    help: str
    metavar: str = "VALUE"
    multiple: bool = True
    with_dataset: bool = False
    """The option refines ``--dataset`` instead of replacing it: ``cases`` then also gets the
    dataset under ``"dataset"`` (sql: ``--dataset dev.json --db-dir DIR``)."""


@dataclass
class EvalSuite:
    app: str
    dataset: Path
    strategies: Mapping[str, Strategy[Any, Any]]
    """Name -> ``run(input, deps, config) -> Decision``: the app spec's strategies."""
    default_strategy: str
    labels: list[str]
    """The classes of the verdict, for per-class metrics and the confusion matrix."""
    input_model: type[BaseModel] | Callable[[EvalCase], Any] | None = None
    """Turns a case into the strategy's input: a pydantic type (validated from
    ``case.inputs``) or a function of the case; None passes ``case.inputs`` as is."""
    deps: Callable[[Any], Any] | None = None
    """``deps(settings)`` -> the deps every case of a run shares (stores are opened once per
    run); each case's models come in its ``RunConfig``, recorded or replayed under
    ``--record`` / ``--replay``. None: the strategies get ``None``."""
    verdict_field: str = "verdict"
    confidence_field: str | None = "confidence"
    """0-100 confidence in the output, for calibration; None when the app has none."""
    evaluators: list[Evaluator] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    """The app's figures, drawn into the run directory and shown in the HTML report."""
    targets: dict[str, float] = field(default_factory=dict)
    """Headline metric -> target, e.g. ``{"verdict_accuracy": 0.95}``: the metric must be >= the
    target, unless the key ends in ``_max`` (``{"redundant_call_rate_max": 0.05}``: <=)."""
    judge_rubric: str | None = None
    """When set and a judge model is given, an LLM judge scores each output with this rubric."""
    setup: Callable[[Any], None] | None = None
    """Prepares stores before a run (e.g. seeds the sample data); receives the settings."""
    datasets: dict[str, Path] = field(default_factory=dict)
    """Further named datasets (``--dataset NAME``); ``dataset`` is the default one."""
    options: list[SuiteOption] = field(default_factory=list)
    """App-specific options of ``casework eval APP``."""
    cases: Callable[[Any, dict[str, list[str]]], list[EvalCase]] | None = None
    """``cases(settings, options)`` -> the cases to run when an app option asks for them
    (e.g. ``--receipts all``); returns ``[]`` when the options do not select cases."""
    match_fields: list[str] | None = None
    """Expected fields compared exactly with the output (field match / exact match); a field the
    output lacks is a mismatch. None: the verdict field, and every other expected field the
    output has (not ``tools``, ``tool_args``, ``confidence``, ``reasoning``, ``notes``)."""
    raw_verdict_field: str | None = None
    """The output field with the verdict before the app's confidence threshold (receipts:
    ``raw_verdict``); calibration is fitted on whether that verdict was right."""
    confidence_scale: float = 100.0
    """What a confidence of 100% is in the output (100 for 0-100, 1 for 0-1)."""
    submit_tool: str = "submit_decision"
    """The terminal tool; left out of trajectory comparisons unless the reference names it."""
    read_case: Callable[[dict[str, Any], Path], dict[str, Any]] | None = None
    """``read_case(line, dataset_path)`` turns one decoded JSONL line into the standard record
    (``id``, ``inputs``, ``expected``, ``metadata``) before it is checked, so an app can take
    its own short form and resolve files relative to the dataset (documents: ``{"id", "file",
    "gold"}``). Raises ``ValueError`` saying what is wrong with the line."""
    correct: Callable[[EvalCase, CaseOutput], bool | None] | None = None
    """Whether a case's output is right, for apps whose expected answer is not a verdict or
    exact fields (documents: every gold field matched after normalising); it decides the
    case's ``correct`` and so the run's list of failed cases. None: verdict, then fields."""
    headline: list[str] = field(default_factory=list)
    """The app's own metrics that ``casework eval APP`` prints after the targets (all of them
    are in the JSON summary and the report either way)."""
    run_metrics: Callable[[Sequence[CaseResult]], Mapping[str, float | int | None]] | None = None
    """Run-level metrics of the scored cases, for figures a per-case mean cannot give
    (micro-averaged precision / recall, calibration pooled over fields, totals); they join the
    headline metrics before the targets are checked."""

    learn_dataset: str | None = None
    """The named dataset ``casework eval APP --learn`` runs when no ``--dataset`` is given (one
    whose cases the app's examples hook takes); None: the default dataset."""
    learning_metric: str | None = None
    """The per-case score the learning curve draws (one of the app's evaluators' keys, such
    as vanpool's ``bucket_match``); None: the share of cases right."""

    calibrate_more: Callable[[Sequence[CaseResult], Any, str], str | None] | None = None
    """An app's own fit, run by ``casework eval calibrate`` after the platform's:
    ``calibrate_more(cases, settings, run_id)`` stores what it fits under the home and returns
    a sentence saying what it stored (None: nothing to fit in this run)."""

    def strategy_input(self, case: EvalCase) -> Any:
        model = self.input_model
        if model is None:
            return dict(case.inputs)
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_validate(case.inputs)
        # Not a BaseModel class: the case -> input function.
        return cast(Callable[[EvalCase], Any], model)(case)
