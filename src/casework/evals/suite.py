"""The contract between an app and the evaluation harness.

An app's ``AppSpec.eval_suite()`` returns an ``EvalSuite``: its dataset, its strategies (the
agent, a baseline, ...), which output field holds the verdict, its domain evaluators and its
targets. The runner does the rest (concurrency, retries, traces, storage, reports).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from casework.runtime.react import RunResult
from casework.runtime.usage import Usage

__all__ = [
    "CaseOutput",
    "EvalCase",
    "EvalSuite",
    "Evaluator",
    "Strategy",
    "StrategyFactory",
    "StrategyOptions",
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
    """What a strategy produced for one case."""

    output: dict[str, Any]
    """The decision as plain data (e.g. ``{"verdict": "VALID", "confidence": 92, ...}``)."""
    run: RunResult | None = None
    """The agent run (tool calls, messages, usage, trace) when the strategy is an agent."""
    usage: Usage | None = None
    """Usage when there is no run (a baseline may still report tool calls or time)."""


@dataclass
class StrategyOptions:
    """What the runner hands a strategy factory. ``model_for`` handles ``--record``/replay."""

    model: str | None = None
    judge_model: str | None = None
    settings: Any = None
    model_for: Callable[[str, str], BaseChatModel] | None = None
    """``model_for(case_id, role)`` -> a chat model (recording or replaying when asked)."""
    trace_dir: Path | None = None


Strategy = Callable[[EvalCase], CaseOutput | Awaitable[CaseOutput]]
StrategyFactory = Callable[[StrategyOptions], Strategy]
Evaluator = Callable[[EvalCase, CaseOutput], dict[str, float | int | str | None]]
"""A domain evaluator: per-case scores; the runner averages numeric ones across cases."""


@dataclass
class EvalSuite:
    app: str
    dataset: Path
    strategies: dict[str, StrategyFactory]
    default_strategy: str
    labels: list[str]
    """The classes of the verdict, for per-class metrics and the confusion matrix."""
    verdict_field: str = "verdict"
    confidence_field: str | None = "confidence"
    """0-100 confidence in the output, for calibration; None when the app has none."""
    evaluators: list[Evaluator] = field(default_factory=list)
    targets: dict[str, float] = field(default_factory=dict)
    """Headline metric -> target, e.g. ``{"verdict_accuracy": 0.95}``: the metric must be >= the
    target, unless the key ends in ``_max`` (``{"redundant_call_rate_max": 0.05}``: <=)."""
    judge_rubric: str | None = None
    """When set and a judge model is given, an LLM judge scores each output with this rubric."""
    setup: Callable[[Any], None] | None = None
    """Prepares stores before a run (e.g. seeds the sample data); receives the settings."""
    datasets: dict[str, Path] = field(default_factory=dict)
    """Further named datasets (``--dataset NAME``); ``dataset`` is the default one."""
    match_fields: list[str] | None = None
    """Expected fields compared exactly with the output (field match / exact match); a field the
    output lacks is a mismatch. None: the verdict field, and every other expected field the
    output has (not ``tools``, ``tool_args``, ``confidence``, ``reasoning``, ``notes``)."""
    confidence_scale: float = 100.0
    """What a confidence of 100% is in the output (100 for 0-100, 1 for 0-1)."""
    submit_tool: str = "submit_decision"
    """The terminal tool; left out of trajectory comparisons unless the reference names it."""
