"""Calibration in the harness: fit on a stored run, store per (app, strategy, model), report
ECE before and after.

The pairs are (stated confidence, was the decision right) of every scored case. When the
suite names a ``raw_verdict_field`` (the verdict before the app's confidence threshold),
"right" is that verdict's: the map is then fitted on what the threshold acts on, not on its
own downgrades.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casework.config import Settings
from casework.errors import InputError
from casework.evals.evaluators.calibration import calibration_report
from casework.evals.layer_report import layer_names, layer_outcomes
from casework.evals.results import CaseResult, EvalRun
from casework.runtime.calibration import (
    Calibration,
    calibration_path,
    cross_fit,
    fit_calibration,
    load_calibration,
    save_calibration,
)
from casework.runtime.cascade import CascadePolicy, cascade_path, save_policy
from casework.runtime.cascade_fit import fit_policy, fit_policy_for_budget

__all__ = ["add_calibration", "calibrate_cascade", "calibrate_run", "calibration_pairs"]


def _model(run: EvalRun) -> str | None:
    """The model the strategy reported (what it looks its calibration up by), else the run's."""
    return run.config.get("strategy_model") or run.model


def _right(case: CaseResult, raw_field: str | None) -> bool | None:
    if raw_field and case.output and case.output.get(raw_field) is not None:
        if case.expected_verdict is None:
            return None
        return str(case.output[raw_field]) == case.expected_verdict
    return case.correct


def calibration_pairs(run: EvalRun) -> list[tuple[float, bool]]:
    """(confidence 0-100, right) of every case with both."""
    raw_field = run.config.get("raw_verdict_field")
    pairs = []
    for c in run.cases:
        right = _right(c, raw_field)
        if c.confidence is not None and right is not None and c.error is None:
            pairs.append((c.confidence * 100.0, right))
    return pairs


def _ece(confidences: list[float], right: list[bool]) -> dict[str, Any]:
    report = calibration_report([x / 100.0 for x in confidences], right)
    return {"ece": report.ece, "brier": report.brier, "report": report.to_dict()}


def add_calibration(run: EvalRun, settings: Settings, *, fit_here: bool = False) -> None:
    """Adds ECE before calibration (on the fitted pairs), after the stored calibration of
    (app, strategy, model) when there is one, and after a cross-fitted calibration on this
    run when ``fit_here``."""
    pairs = calibration_pairs(run)
    if not pairs:
        return
    confidences = [p[0] for p in pairs]
    right = [p[1] for p in pairs]
    before = _ece(confidences, right)
    details: dict[str, Any] = {"pairs": len(pairs), "before": before["report"]}
    run.metrics["ece_before_calibration"] = before["ece"]
    path = calibration_path(settings.home, run.app, run.strategy, _model(run))
    stored = load_calibration(path)
    if stored is not None:
        after = _ece([stored.apply(c) for c in confidences], right)
        run.metrics["ece_after_calibration"] = after["ece"]
        details["stored"] = {"path": str(path), "source": stored.source, **after}
    if fit_here and len(pairs) >= 4:
        after = _ece(cross_fit(pairs), right)
        run.metrics["ece_after_calibration_cv"] = after["ece"]
        details["cross_fit"] = {"folds": 5, **after}
    run.details["calibration_fit"] = details


def calibrate_run(run: EvalRun, settings: Settings) -> tuple[Calibration, Any]:
    """Fit on a stored run and store it for (app, strategy, model); returns it and its path."""
    cal = fit_calibration(calibration_pairs(run), source=run.run_id)
    path = save_calibration(
        cal, calibration_path(settings.home, run.app, run.strategy, _model(run))
    )
    return cal, path


def calibrate_cascade(
    run: EvalRun, settings: Settings, *, target: float, max_model_share: float | None = None
) -> tuple[CascadePolicy, Path]:
    """Fit a cascade's thresholds (and each layer's calibration) on a run where every layer
    ran on every case (``--all-layers``), and store it for the app and the remote model its
    remote layer ran (or as the offline cascade when none ran). With ``max_model_share`` the
    layers before the model keep what they decide at the highest accuracy that sends no
    more than that share of the cases on to a model (``fit_policy_for_budget``)."""
    cases = [c for c in run.cases if c.layers and c.error is None]
    names = layer_names(cases)
    if any({o["layer"] for o in c.layers} < set(names) for c in cases):
        raise InputError(
            f"Run {run.run_id} did not run every layer on every case; run it again with --all-layers to fit the cascade."
        )
    outcomes = layer_outcomes(cases)
    if max_model_share is None:
        policy = fit_policy(outcomes, names, target=target, source=run.run_id)
    else:
        policy = fit_policy_for_budget(
            outcomes, names, target=target, max_model_share=max_model_share, source=run.run_id
        )
    remote = next(
        (o["model"] for c in cases for o in c.layers if o.get("remote") and o.get("model")), None
    )
    path = cascade_path(settings.home, run.app, remote)
    save_policy(policy, path)
    return policy, path
