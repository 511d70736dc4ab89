"""How metrics read in tables and reports: names people understand, rates in percent."""

from __future__ import annotations

from typing import Any

__all__ = ["HEADLINE", "format_metric", "metric_label"]

_PERCENT_HINTS = (
    "accuracy",
    "_rate",
    "match",
    "optimality",
    "f1",
    "precision",
    "recall",
    "agreement",
    "success",
    "efficiency",
    "validity",
)
_LABELS = {
    "verdict_accuracy": "Verdict accuracy",
    "accuracy": "Accuracy (verdict or exact match)",
    "macro_f1": "Macro F1",
    "exact_match": "Exact match",
    "error_rate": "Error rate",
    "ece": "Expected calibration error",
    "mce": "Max calibration error",
    "brier": "Brier score",
    "mean_confidence": "Mean confidence",
    "overconfidence": "Overconfidence",
    "tool_choice_accuracy": "Tool choice accuracy",
    "tool_precision": "Tool precision",
    "tool_recall": "Tool recall",
    "missing_tool_rate": "Cases missing a tool",
    "unnecessary_tool_rate": "Cases with an unnecessary tool",
    "param_accuracy": "Parameter accuracy",
    "hallucinated_param_rate": "Hallucinated parameter rate",
    "trajectory_optimality": "Trajectory optimality",
    "trajectory_strict_match": "Trajectory strict match",
    "trajectory_unordered_match": "Trajectory unordered match",
    "trajectory_subset_match": "Trajectory subset match",
    "trajectory_superset_match": "Trajectory superset match",
    "path_length_mean": "Avg path length",
    "optimal_length_mean": "Avg optimal length",
    "path_ratio_mean": "Path / optimal ratio",
    "path_efficiency": "Path efficiency",
    "edit_distance_mean": "Avg edit distance to reference",
    "redundant_call_rate": "Redundant call rate",
    "circular_rate": "Circular trajectory rate",
    "self_correction_success": "Self-correction success",
    "dead_end_rate": "Dead-end rate",
    "tool_errors": "Failed tool calls",
    "model_calls_mean": "Model calls / case",
    "tool_calls_mean": "Tool calls / case",
    "total_tokens_mean": "Tokens / case",
    "wall_seconds_mean": "Latency (mean)",
    "wall_seconds_p50": "Latency p50",
    "wall_seconds_p95": "Latency p95",
    "cost_per_case": "Cost / case",
    "cost_per_1k": "Cost / 1,000 cases",
    "cost_total": "Cost (run)",
    "judge_score_mean": "Judge score (mean)",
    "judge_pass_rate": "Judge pass rate",
    "judge_agreement": "Judge ↔ deterministic agreement",
    "judge_kappa": "Judge ↔ deterministic kappa",
    "judged": "Cases judged",
    "judge_errors": "Judge errors",
    "cases": "Cases",
    "errors": "Errors",
}
HEADLINE = (
    "verdict_accuracy",
    "exact_match",
    "macro_f1",
    "ece",
    "tool_choice_accuracy",
    "trajectory_optimality",
    "redundant_call_rate",
    "circular_rate",
    "wall_seconds_p95",
    "cost_per_1k",
    "judge_score_mean",
    "judge_kappa",
)


def metric_label(name: str) -> str:
    if name in _LABELS:
        return _LABELS[name]
    if name.startswith("f1."):
        return f"F1 of {name[3:]}"
    if name.startswith("field_match."):
        return f"Field match: {name[12:]}"
    return name.replace("_", " ").capitalize()


def format_metric(name: str, value: Any) -> str:
    """A metric as a person reads it: rates in percent, seconds, dollars."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, int | float):
        return str(value)
    if name.startswith("cost"):
        return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"
    if name.startswith("wall_seconds") or name.endswith("_seconds"):
        return f"{value:.2f} s" if value < 100 else f"{value:,.0f} s"
    if name in (
        "ece",
        "ece_before_calibration",
        "ece_after_calibration",
        "ece_after_calibration_cv",
        "mce",
        "brier",
        "judge_kappa",
        "overconfidence",
        "judge_score_mean",
        "mean_confidence",
    ):
        return f"{value:.3f}"
    if name.startswith(("f1.", "field_match.")) or any(h in name for h in _PERCENT_HINTS):
        return f"{100 * value:.1f}%"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"
