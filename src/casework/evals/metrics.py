"""Scoring one case and summarising a run into headline metrics, details and targets.

``score_case`` runs every deterministic evaluator on one strategy output; ``summarize`` turns
the scored cases into flat metrics (what targets, ``list`` and ``compare`` read) and details
(confusion matrix, reliability bins, groups, ...) for the report.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from casework.evals.evaluators.calibration import calibration_report, normalize_confidence
from casework.evals.evaluators.classification import (
    classification_report,
    field_match,
    match_fields_for,
)
from casework.evals.evaluators.efficiency import case_efficiency, efficiency_summary
from casework.evals.evaluators.judge import judge_agreement
from casework.evals.evaluators.trajectory import evaluate_trajectory, tool_choice
from casework.evals.layer_report import cascade_summary
from casework.evals.results import CaseResult, TargetResult
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite
from casework.runtime.decision import EndReason, RunInfo

__all__ = [
    "TIMING_METRICS",
    "check_targets",
    "score_case",
    "summarize",
]

TIMING_METRICS = frozenset(
    {"wall_seconds_mean", "wall_seconds_p50", "wall_seconds_p95", "wall_seconds_max"}
)
"""Metrics that depend on the clock; a replayed run reproduces every other metric exactly."""

_GROUP_KEYS = ("scenario_type", "complexity")


def _plain(value: Any) -> Any:
    """Enums and other objects with a ``value`` become that value; everything else stays."""
    return (
        getattr(value, "value", value) if not isinstance(value, str | int | float | bool) else value
    )


def _scored_layer(suite: EvalSuite, case: EvalCase, outcome: Any) -> dict[str, Any]:
    """A cascade layer's outcome with ``right`` judged as the case's own output would be."""
    data = outcome.model_dump(mode="json") if hasattr(outcome, "model_dump") else dict(outcome)
    if data.get("error") or not data.get("output"):
        data["right"] = None if data.get("error") is None else False
        return data
    layer_out = data["output"]
    if suite.correct is not None:
        data["right"] = suite.correct(case, CaseOutput(output=layer_out))
    elif case.expected.get(suite.verdict_field) is not None:
        want = str(_plain(case.expected[suite.verdict_field]))
        data["right"] = str(_plain(layer_out.get(suite.verdict_field))) == want
    else:
        fields = match_fields_for(case.expected)
        matched = field_match(case.expected, layer_out, fields) if fields else {}
        data["right"] = all(matched.values()) if matched else None
    return data


def _score_run(suite: EvalSuite, case: EvalCase, run: RunInfo | None, result: CaseResult) -> None:
    """The run's tool calls, its layers, its trajectory and (with a reference) tool choice."""
    calls = list(run.tool_calls) if run is not None else []
    result.tool_calls = [
        {"name": c.name, "args": c.args, "ok": c.ok, "output": (c.output or "")[:500]}
        for c in calls
    ]
    if run is not None:
        result.ended_by = run.ended_by.value
        if run.layers:
            result.decided_by = run.decided_by
            result.layers = [_scored_layer(suite, case, o) for o in run.layers]
    reference = case.expected.get("tools")
    # A rules strategy that called nothing has no trajectory to score.
    if run is not None and (run.tool_calls or run.ended_by != EndReason.RULES):
        result.trajectory = evaluate_trajectory(
            calls, reference, submit_tool=suite.submit_tool, ended_by=run.ended_by
        ).to_dict()
        if reference is not None:
            result.tool_choice = tool_choice(
                calls,
                reference,
                expected_args=case.expected.get("tool_args"),
                inputs=case.inputs,
                submit_tool=suite.submit_tool,
            ).to_dict()


def score_case(
    suite: EvalSuite,
    case: EvalCase,
    index: int,
    out: CaseOutput | None,
    *,
    error: str | None = None,
    attempts: int = 1,
    wall_seconds: float = 0.0,
) -> CaseResult:
    """Every deterministic score of one case (the judge is added by the runner)."""
    result = CaseResult(
        case_id=case.id,
        index=index,
        inputs=case.inputs,
        expected=case.expected,
        metadata=case.metadata,
        error=error,
        attempts=attempts,
        wall_seconds=wall_seconds,
    )
    expected_verdict = case.expected.get(suite.verdict_field)
    result.expected_verdict = None if expected_verdict is None else str(_plain(expected_verdict))
    output = dict(out.output) if out is not None and out.output is not None else None
    result.output = output
    run = out.run if out is not None else None
    if output is not None:
        verdict = output.get(suite.verdict_field)
        result.verdict = None if verdict is None else str(_plain(verdict))
        if suite.confidence_field:
            result.confidence = normalize_confidence(
                output.get(suite.confidence_field), suite.confidence_scale
            )
    fields = suite.match_fields
    if fields is None:  # the verdict, and the other expected fields the output has
        fields = [
            f
            for f in match_fields_for(case.expected)
            if f == suite.verdict_field or f in (output or {})
        ]
    result.fields = field_match(case.expected, output, fields) if case.expected else {}
    if result.fields:
        result.exact_match = all(result.fields.values())
    if suite.correct is not None:
        result.correct = suite.correct(case, out) if out is not None else None
    elif result.expected_verdict is not None:
        result.correct = result.verdict == result.expected_verdict
    elif result.exact_match is not None:
        result.correct = result.exact_match
    if error is not None and result.correct is not None:
        result.correct = False

    _score_run(suite, case, run, result)
    usage = run.usage if run is not None else (out.usage if out is not None else None)
    # A cascade's usage is what its paid layers cost (under --all-layers it ran more)
    paid = run is not None and bool(run.layers)
    result.efficiency = case_efficiency(usage, wall_seconds=None if paid else wall_seconds)

    if out is not None and error is None:
        for evaluator in suite.evaluators:
            name = getattr(evaluator, "__name__", type(evaluator).__name__)
            try:
                result.domain.update(evaluator(case, out) or {})
            except Exception as exc:  # an app's evaluator bug must not end a long run
                result.domain[f"{name}.error"] = f"{type(exc).__name__}: {exc}"
    return result


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(flags: Sequence[bool]) -> float | None:
    return sum(1 for f in flags if f) / len(flags) if flags else None


def _group_keys(cases: Sequence[CaseResult]) -> list[str]:
    """``scenario_type`` and ``complexity``, then any other metadata key with a few (2-12)
    distinct plain values across the run, such as an app's ``kind``."""
    values: dict[str, set[str]] = defaultdict(set)
    for c in cases:
        for key, value in c.metadata.items():
            if key != "tags" and isinstance(value, str | int | bool):
                values[key].add(str(value))
    extra = sorted(k for k, v in values.items() if k not in _GROUP_KEYS and 2 <= len(v) <= 12)
    return [k for k in _GROUP_KEYS if k in values] + extra


def _group_accuracy(cases: Sequence[CaseResult]) -> dict[str, dict[str, dict[str, Any]]]:
    groups: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    keys = _group_keys(cases)
    for c in cases:
        if c.correct is None:
            continue
        for key in keys:
            value = c.metadata.get(key)
            if value is not None:
                groups[key][str(value)].append(c.correct)
        for tag in c.metadata.get("tags") or []:
            groups["tags"][str(tag)].append(c.correct)
    ordered = [k for k in [*keys, "tags"] if k in groups]
    return {
        key: {
            v: {"n": len(flags), "accuracy": _rate(flags)}
            for v, flags in sorted(groups[key].items())
        }
        for key in ordered
    }


def _decisions(
    cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any], labels: Sequence[str]
) -> None:
    """Verdict accuracy, F1 per class, exact and per-field matches."""
    with_verdict = [c for c in cases if c.expected_verdict is not None]
    if with_verdict:
        report = classification_report(
            [c.expected_verdict for c in with_verdict], [c.verdict for c in with_verdict], labels
        )
        m["verdict_accuracy"] = report.accuracy
        m["macro_f1"] = report.macro_f1
        for cls in report.per_class:
            m[f"f1.{cls.label}"] = cls.f1
        d["classification"] = report.to_dict()
    compared = [c for c in cases if c.correct is not None]
    m["accuracy"] = _rate([bool(c.correct) for c in compared])
    with_fields = [c for c in cases if c.exact_match is not None]
    if with_fields:
        m["exact_match"] = _rate([bool(c.exact_match) for c in with_fields])
        names = sorted({f for c in with_fields for f in c.fields})
        for f in names:
            m[f"field_match.{f}"] = _rate([c.fields[f] for c in with_fields if f in c.fields])


def _calibration(cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any]) -> None:
    """ECE, MCE, Brier and over-confidence of the stated confidences."""
    pairs = [
        (c.confidence, bool(c.correct))
        for c in cases
        if c.confidence is not None and c.correct is not None
    ]
    if pairs:
        cal = calibration_report([p[0] for p in pairs], [p[1] for p in pairs])
        m.update(
            ece=cal.ece,
            mce=cal.mce,
            brier=cal.brier,
            mean_confidence=cal.mean_confidence,
            overconfidence=cal.overconfidence,
        )
        d["calibration"] = cal.to_dict()


def _tool_choice(cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any]) -> None:
    """Tool choice: precision, recall, missing and unnecessary tools, parameters."""
    chosen = [c.tool_choice for c in cases if c.tool_choice is not None]
    if chosen:
        m["tool_choice_accuracy"] = _rate([t["correct"] for t in chosen])
        m["tool_precision"] = _mean([t["precision"] for t in chosen])
        m["tool_recall"] = _mean([t["recall"] for t in chosen])
        m["missing_tool_rate"] = _rate([bool(t["missing"]) for t in chosen])
        m["unnecessary_tool_rate"] = _rate([bool(t["unnecessary"]) for t in chosen])
        checked = sum(t["params_checked"] for t in chosen)
        m["param_accuracy"] = (
            sum(t["params_correct"] for t in chosen) / checked if checked else None
        )
        total = sum(t["params_total"] for t in chosen)
        m["hallucinated_param_rate"] = (
            sum(len(t["hallucinated"]) for t in chosen) / total if total else None
        )


def _trajectories(cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any]) -> None:
    """Paths: length, repeats, self-corrections, matches to the reference path."""
    trajs = [c.trajectory for c in cases if c.trajectory is not None]
    if trajs:
        steps = sum(t["path_length"] for t in trajs)
        m["path_length_mean"] = _mean([t["path_length"] for t in trajs])
        m["redundant_call_rate"] = sum(len(t["redundant"]) for t in trajs) / steps if steps else 0.0
        m["circular_rate"] = _rate([t["is_circular"] for t in trajs])
        errs = sum(t["errors"] for t in trajs)
        m["tool_errors"] = errs
        m["self_correction_success"] = sum(t["corrected"] for t in trajs) / errs if errs else None
        m["dead_end_rate"] = _rate([t["type"] == "dead_end" for t in trajs])
        d["trajectory_types"] = dict(sorted(Counter(t["type"] for t in trajs).items()))
        refd = [t for t in trajs if t["reference"] is not None]
        if refd:
            for mode in ("strict", "unordered", "subset", "superset"):
                m[f"trajectory_{mode}_match"] = _rate([t["matches"][mode] for t in refd])
            m["trajectory_optimality"] = _rate([bool(t["optimal"]) for t in refd])
            m["optimal_length_mean"] = _mean([t["optimal_length"] for t in refd])
            m["path_ratio_mean"] = _mean(
                [t["path_ratio"] for t in refd if t["path_ratio"] is not None]
            )
            m["path_efficiency"] = _mean([t["path_efficiency"] for t in refd])
            m["edit_distance_mean"] = _mean([t["edit_distance"] for t in refd])


def _efficiency(cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any]) -> None:
    """Model and tool calls, tokens, wall time and cost per case."""
    eff = efficiency_summary([c.efficiency for c in cases])
    d["efficiency"] = eff
    for key in (
        "model_calls_mean",
        "tool_calls_mean",
        "total_tokens_mean",
        "wall_seconds_mean",
        "wall_seconds_p50",
        "wall_seconds_p95",
        "cost_per_case",
        "cost_per_1k",
        "cost_total",
    ):
        m[key] = eff[key]


def _cascade(cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any]) -> None:
    """Cascade: who decided, and (every layer run) the accuracy–cost curve."""
    cascade_m, cascade_d = cascade_summary(cases)
    m.update(cascade_m)
    if cascade_d:
        d["cascade"] = cascade_d


def _domain(cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any]) -> None:
    """Domain evaluators: the mean of each numeric score (booleans count as 0 / 1)."""
    domain: dict[str, list[float]] = defaultdict(list)
    for c in cases:
        for k, v in c.domain.items():
            if isinstance(v, bool):
                domain[k].append(1.0 if v else 0.0)
            elif isinstance(v, int | float) and not math.isnan(v):
                domain[k].append(float(v))
    for k, vals in sorted(domain.items()):
        m.setdefault(k, _mean(vals))
    if domain:
        d["domain"] = sorted(domain)


def _judge(
    cases: Sequence[CaseResult], m: dict[str, Any], d: dict[str, Any], judge_threshold: float
) -> None:
    """The judge's scores and its agreement with the labels."""
    judged = [c for c in cases if c.judge and "score" in c.judge]
    judge_errors = [c for c in cases if c.judge and "error" in c.judge]
    if judged or judge_errors:
        m["judged"] = len(judged)
        m["judge_errors"] = len(judge_errors)
        m["judge_score_mean"] = _mean([float(c.judge["score"]) for c in judged])  # type: ignore[index]
        m["judge_pass_rate"] = _rate([float(c.judge["score"]) >= judge_threshold for c in judged])  # type: ignore[index]
        both = [c for c in judged if c.correct is not None]
        agreement = judge_agreement(
            [float(c.judge["score"]) >= judge_threshold for c in both],  # type: ignore[index]
            [bool(c.correct) for c in both],
        )
        m["judge_agreement"] = agreement["agreement"]
        m["judge_kappa"] = agreement["kappa"]
        d["judge"] = {"threshold": judge_threshold, **agreement}


def summarize(
    cases: Sequence[CaseResult],
    *,
    labels: Sequence[str] = (),
    targets: Mapping[str, float] | None = None,
    judge_threshold: float = 0.5,
    run_metrics: Callable[[Sequence[CaseResult]], Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any], list[TargetResult]]:
    """(metrics, details, target results) of scored cases. Every rate's denominator is the
    cases where it applies (with an expected verdict, with a reference path, ...).
    ``run_metrics`` (``EvalSuite.run_metrics``) adds the app's run-level figures."""
    m: dict[str, Any] = {"cases": len(cases)}
    d: dict[str, Any] = {}
    errors = [c for c in cases if c.error is not None]
    m["errors"] = len(errors)
    m["error_rate"] = len(errors) / len(cases) if cases else None

    _decisions(cases, m, d, labels)
    _calibration(cases, m, d)
    _tool_choice(cases, m, d)
    _trajectories(cases, m, d)
    _efficiency(cases, m, d)
    _cascade(cases, m, d)
    _domain(cases, m, d)
    _judge(cases, m, d, judge_threshold)
    if run_metrics is not None:
        m.update(run_metrics(cases))
    d["groups"] = _group_accuracy(cases)
    return m, d, check_targets(m, targets or {})


def check_targets(metrics: Mapping[str, Any], targets: Mapping[str, float]) -> list[TargetResult]:
    """Each target against its metric: ``>=``, or ``<=`` for keys ending in ``_max``."""
    out = []
    for key, target in targets.items():
        if key.endswith("_max"):
            name, op = key[: -len("_max")], "<="
        else:
            name, op = key, ">="
        value = metrics.get(name)
        if value is None:
            met = None
        else:
            met = value <= target + 1e-12 if op == "<=" else value >= target - 1e-12
        out.append(TargetResult(metric=name, op=op, target=float(target), value=value, met=met))
    return out
