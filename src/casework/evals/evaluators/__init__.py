"""Evaluators: plain functions on decisions, trajectories and usage, each tested directly."""

from casework.evals.evaluators.calibration import (
    CalibrationReport,
    ReliabilityBin,
    calibration_report,
    expected_calibration_error,
    normalize_confidence,
    reliability_bins,
)
from casework.evals.evaluators.classification import (
    ClassificationReport,
    classification_report,
    confusion_matrix,
    field_match,
    values_match,
)
from casework.evals.evaluators.efficiency import case_efficiency, efficiency_summary
from casework.evals.evaluators.judge import Judgement, ajudge, cohen_kappa, judge, judge_agreement
from casework.evals.evaluators.trajectory import (
    ToolChoice,
    TrajectoryScores,
    circular_calls,
    classify_trajectory,
    edit_distance,
    evaluate_trajectory,
    match_trajectory,
    redundant_calls,
    self_corrections,
    tool_choice,
)

__all__ = [
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
]
