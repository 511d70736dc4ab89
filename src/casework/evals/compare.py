"""Two runs of the same dataset side by side: A/B of models or strategies.

Per-case differences (fixed, broken, changed verdict), every common metric with its delta,
and the significance of the accuracy difference by McNemar's exact test on the paired
correctness of the cases both runs scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from casework.errors import InputError
from casework.evals.results import CaseResult, EvalRun

__all__ = [
    "CaseDiff",
    "Comparison",
    "McNemar",
    "compare_runs",
    "mcnemar_exact",
    "render_compare_html",
]


@dataclass
class McNemar:
    """McNemar's exact test: of the discordant pairs, is "A right, B wrong" as likely as the
    reverse? ``p_value`` is two-sided (binomial, p = 0.5)."""

    a_only: int
    """Cases A got right and B wrong."""
    b_only: int
    """Cases B got right and A wrong."""
    both: int
    neither: int
    p_value: float
    significant: bool
    """p < alpha."""
    alpha: float = 0.05

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mcnemar_exact(
    a_correct: Sequence[bool], b_correct: Sequence[bool], *, alpha: float = 0.05
) -> McNemar:
    """McNemar's exact test on paired correctness (same cases, same order)."""
    from scipy.stats import binomtest

    if len(a_correct) != len(b_correct):
        raise ValueError("the two runs must be paired case by case")
    a_only = sum(1 for a, b in zip(a_correct, b_correct, strict=True) if a and not b)
    b_only = sum(1 for a, b in zip(a_correct, b_correct, strict=True) if b and not a)
    both = sum(1 for a, b in zip(a_correct, b_correct, strict=True) if a and b)
    neither = len(a_correct) - a_only - b_only - both
    n = a_only + b_only
    p = 1.0 if n == 0 else float(binomtest(a_only, n, 0.5, alternative="two-sided").pvalue)
    return McNemar(a_only, b_only, both, neither, min(1.0, p), p < alpha, alpha)


@dataclass
class CaseDiff:
    case_id: str
    expected: str | None
    a_verdict: str | None
    b_verdict: str | None
    a_correct: bool | None
    b_correct: bool | None
    change: str
    """``fixed`` (B right where A was wrong), ``broken``, ``changed`` (another verdict, same
    correctness), ``same``."""
    a_confidence: float | None = None
    b_confidence: float | None = None
    a_tool_calls: int = 0
    b_tool_calls: int = 0
    a_seconds: float = 0.0
    b_seconds: float = 0.0
    a_cost: float | None = None
    b_cost: float | None = None
    a_error: str | None = None
    b_error: str | None = None


@dataclass
class Comparison:
    a: dict[str, Any]
    b: dict[str, Any]
    """Each run's facts (id, app, strategy, model, dataset, cases)."""
    metrics: list[dict[str, Any]]
    """``{"metric", "a", "b", "delta"}`` for each metric either run has (on the shared cases
    when the runs cover different cases)."""
    cases: list[CaseDiff]
    mcnemar: McNemar | None
    """None when no case was scored by both runs."""
    accuracy_a: float | None
    accuracy_b: float | None
    paired_cases: int
    only_in_a: list[str] = field(default_factory=list)
    only_in_b: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[CaseDiff]:
        return [c for c in self.cases if c.change != "same"]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["mcnemar"] = self.mcnemar.to_dict() if self.mcnemar else None
        return data


def _change(a: CaseResult, b: CaseResult) -> str:
    if a.correct is False and b.correct is True:
        return "fixed"
    if a.correct is True and b.correct is False:
        return "broken"
    if a.verdict != b.verdict or (a.error is None) != (b.error is None):
        return "changed"
    return "same"


def _facts(run: EvalRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "app": run.app,
        "strategy": run.strategy,
        "model": run.model,
        "judge_model": run.judge_model,
        "dataset": run.dataset,
        "dataset_sha256": run.dataset_sha256,
        "cases": len(run.cases),
        "created_at": run.created_at,
        "run_dir": run.run_dir,
    }


def compare_runs(a: EvalRun, b: EvalRun, *, alpha: float = 0.05) -> Comparison:
    """Compare two runs case by case (matched by case id) and metric by metric."""
    warnings = []
    if a.app != b.app:
        warnings.append(f"The runs evaluate different apps ({a.app} and {b.app}).")
    if a.dataset_sha256 != b.dataset_sha256:
        warnings.append(
            "The runs used different dataset files; only the cases with the same id are paired."
        )
    by_b = {c.case_id: c for c in b.cases}
    ids_a = [c.case_id for c in a.cases]
    paired = [(c, by_b[c.case_id]) for c in a.cases if c.case_id in by_b]
    if not paired:
        raise InputError(
            f"Runs {a.run_id} and {b.run_id} have no case in common; compare runs of the same dataset."
        )
    diffs = [
        CaseDiff(
            case_id=ca.case_id,
            expected=ca.expected_verdict,
            a_verdict=ca.verdict,
            b_verdict=cb.verdict,
            a_correct=ca.correct,
            b_correct=cb.correct,
            change=_change(ca, cb),
            a_confidence=ca.confidence,
            b_confidence=cb.confidence,
            a_tool_calls=len(ca.tool_calls),
            b_tool_calls=len(cb.tool_calls),
            a_seconds=ca.wall_seconds,
            b_seconds=cb.wall_seconds,
            a_cost=ca.efficiency.get("cost_usd"),
            b_cost=cb.efficiency.get("cost_usd"),
            a_error=ca.error,
            b_error=cb.error,
        )
        for ca, cb in paired
    ]
    scored = [(ca, cb) for ca, cb in paired if ca.correct is not None and cb.correct is not None]
    test = (
        mcnemar_exact(
            [bool(x.correct) for x, _ in scored], [bool(y.correct) for _, y in scored], alpha=alpha
        )
        if scored
        else None
    )
    acc_a = sum(1 for x, _ in scored if x.correct) / len(scored) if scored else None
    acc_b = sum(1 for _, y in scored if y.correct) / len(scored) if scored else None
    metrics_a, metrics_b = a.metrics, b.metrics
    if len(paired) != len(a.cases) or len(paired) != len(b.cases):
        from casework.evals.metrics import summarize

        threshold = a.config.get("judge_threshold", 0.5)
        metrics_a = summarize([x for x, _ in paired], labels=a.labels, judge_threshold=threshold)[0]
        metrics_b = summarize([y for _, y in paired], labels=b.labels, judge_threshold=threshold)[0]
        warnings.append(
            f"The runs share {len(paired)} of their cases ({len(a.cases)} in A, {len(b.cases)} in B); "
            "every metric below is recomputed on the shared cases."
        )
    names = list(dict.fromkeys([*metrics_a, *metrics_b]))
    metrics = []
    for name in names:
        va, vb = metrics_a.get(name), metrics_b.get(name)
        delta = None
        if isinstance(va, int | float) and isinstance(vb, int | float) and not isinstance(va, bool):
            delta = vb - va
        metrics.append({"metric": name, "a": va, "b": vb, "delta": delta})
    return Comparison(
        a=_facts(a),
        b=_facts(b),
        metrics=metrics,
        cases=diffs,
        mcnemar=test,
        accuracy_a=acc_a,
        accuracy_b=acc_b,
        paired_cases=len(paired),
        only_in_a=[i for i in ids_a if i not in by_b],
        only_in_b=[c.case_id for c in b.cases if c.case_id not in set(ids_a)],
        warnings=warnings,
    )


def render_compare_html(cmp: Comparison) -> str:
    """A self-contained HTML page of a comparison."""
    from casework.evals.formatting import format_metric, metric_label
    from casework.evals.html import e as _e
    from casework.evals.html import page as _page
    from casework.evals.html import pill as _pill
    from casework.evals.html import table as _table

    def facts(side: dict[str, Any]) -> str:
        return (
            f"<b>{_e(side['run_id'])}</b><br>{_e(side['strategy'])} · {_e(side['model'] or 'settings default')}"
            f"<br><span class='note'>{side['cases']} cases · {_e(side['created_at'])}</span>"
        )

    t = cmp.mcnemar
    if t is None:
        sig = "<p class='note'>No case was scored by both runs.</p>"
    else:
        sig = (
            f"<p>Accuracy A {format_metric('accuracy', cmp.accuracy_a)} → B {format_metric('accuracy', cmp.accuracy_b)} on "
            f"{t.a_only + t.b_only + t.both + t.neither} paired cases. Discordant: A-only right {t.a_only}, B-only right {t.b_only}. "
            f"McNemar exact p = <b>{t.p_value:.4g}</b> "
            f"{_pill(t.significant, 'significant', 'not significant')} at α = {t.alpha}.</p>"
        )
    rows = []
    for m in cmp.metrics:
        if m["a"] is None and m["b"] is None:
            continue
        name = m["metric"]
        delta = m["delta"]
        sign = "" if delta is None else ("+" if delta > 0 else "")
        delta_text = "–" if delta is None else sign + format_metric(name, delta)
        rows.append(
            [
                _e(metric_label(name)),
                format_metric(name, m["a"]),
                format_metric(name, m["b"]),
                delta_text,
            ]
        )
    diffs = [
        [
            _e(c.case_id),
            _e(c.expected),
            _e(c.a_verdict or c.a_error),
            _e(c.b_verdict or c.b_error),
            f"<span class='pill {'ok' if c.change == 'fixed' else 'bad' if c.change == 'broken' else 'warn'}'>{c.change}</span>",
            f"{c.a_tool_calls} → {c.b_tool_calls}",
            f"{c.a_seconds:.2f} → {c.b_seconds:.2f} s",
        ]
        for c in cmp.differing
    ]
    body = [
        "<h1>Comparison</h1><div class='sub'>two runs of the same dataset, case by case</div>",
        "".join(f"<p class='pill warn'>{_e(w)}</p> " for w in cmp.warnings),
        f"<div class='grid2'><div class='panel'><h3>A</h3>{facts(cmp.a)}</div><div class='panel'><h3>B</h3>{facts(cmp.b)}</div></div>",
        "<h2>Significance</h2>",
        sig,
        "<h2>Metrics</h2><div class='panel'>",
        _table(["metric", "A", "B", "B − A"], rows, numeric=(1, 2, 3)),
        "</div>",
        f"<h2>Cases that differ <span class='note'>({len(diffs)} of {cmp.paired_cases})</span></h2>",
        (
            "<div class='panel'>"
            + _table(["case", "expected", "A", "B", "change", "tool calls", "latency"], diffs)
            + "</div>"
        )
        if diffs
        else "<p class='note'>Every paired case has the same outcome.</p>",
    ]
    return _page(f"compare {cmp.a['run_id']} vs {cmp.b['run_id']}", "".join(body))
