"""The learning curve of a ``--learn`` run: per tenth of the stream, the accuracy and the
model share of the run with memory beside the same cases without it (plain functions of the
scored cases), as a table, a report section and an SVG.

* **accuracy**: the mean of the app's learning metric (``EvalSuite.learning_metric``, a
  per-case score such as vanpool's ``bucket_match``) over the tenth's cases, or the share of
  cases right when the app names none; an errored case counts 0;
* **model share**: the share of the tenth's cases a model answered for (``asked_model``: in
  a cascade, a layer it paid for called one), what the run's ``model_share`` counts;
* **to a person**: the share that went to review (``decided`` is false), the cases a
  reviewer answered and so the examples the next cases learn from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from casework.evals.html import e as _e
from casework.evals.html import table as _table
from casework.evals.layer_report import asked_model, decided
from casework.evals.results import CaseResult

__all__ = [
    "case_score",
    "curve_rows",
    "learning_section",
    "learning_summary",
    "parts_of",
    "print_learning",
]


def parts_of(n: int, parts: int = 10) -> list[range]:
    """The indices of ``n`` cases in ``parts`` consecutive slices as even as whole cases allow
    (fewer slices when there are fewer cases): 24 cases in tenths of 2 or 3."""
    k = max(1, min(parts, n))
    bounds = [round(i * n / k) for i in range(k + 1)]
    return [range(bounds[i], bounds[i + 1]) for i in range(k)]


def case_score(case: CaseResult, metric: str | None) -> float | None:
    """The case's accuracy: its ``metric`` (a domain score), else 1 when right and 0 when
    wrong; an errored case 0; None when there is nothing to score."""
    if case.error is not None:
        return 0.0
    if metric is None:
        return None if case.correct is None else float(case.correct)
    value = case.domain.get(metric)
    return float(value) if isinstance(value, int | float) else None


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _share(flags: Sequence[bool | None]) -> float | None:
    """The share of true flags among those known (None: not known for that case)."""
    known = [f for f in flags if f is not None]
    return sum(known) / len(known) if known else None


def _by_memory(case: CaseResult) -> bool | None:
    """Decided by a memory layer: ``memory`` (a near repeat) or ``memory-vote`` (the vote).
    None outside a cascade: a single strategy records no deciding layer, so a ``--strategy
    memory`` run shows "–" there rather than a 0 that reads as "the memory decided nothing"."""
    if not case.layers:
        return None
    return case.decided_by is not None and case.decided_by.split("-")[0] == "memory"


def curve_rows(
    runs: Mapping[str, Sequence[CaseResult]], metric: str | None, parts: int = 10
) -> list[dict[str, Any]]:
    """One row per slice of the stream (tenths): its case numbers, and per run (``runs``:
    name -> its cases in stream order) the accuracy, model share, share to a person and
    share the memory layer decided."""
    n = min(len(cases) for cases in runs.values())
    rows = []
    for i, part in enumerate(parts_of(n, parts)):
        row: dict[str, Any] = {"part": i + 1, "first": part.start + 1, "last": part.stop}
        for name, cases in runs.items():
            chunk = [cases[j] for j in part]
            row[name] = {
                "accuracy": _mean([case_score(c, metric) for c in chunk]),
                "model_share": _share([asked_model(c) for c in chunk]),
                "review_share": _share([not decided(c) for c in chunk]),
                "memory_share": _share([_by_memory(c) for c in chunk]),
            }
        rows.append(row)
    return rows


def learning_summary(
    runs: Mapping[str, Sequence[CaseResult]], rows: Sequence[dict[str, Any]], metric: str | None
) -> dict[str, Any]:
    """Per run: the accuracy on the second half of the stream, and the model share of the
    last slice over the first's (None when the first slice asked no model)."""
    out: dict[str, Any] = {}
    for name, cases in runs.items():
        second = cases[len(cases) // 2 :]
        first_share = rows[0][name]["model_share"] if rows else None
        last_share = rows[-1][name]["model_share"] if rows else None
        out[name] = {
            "accuracy": _mean([case_score(c, metric) for c in cases]),
            "second_half_accuracy": _mean([case_score(c, metric) for c in second]),
            "model_share": _share([asked_model(c) for c in cases]),
            "model_share_first": first_share,
            "model_share_last": last_share,
            "model_share_last_over_first": last_share / first_share
            if first_share and last_share is not None
            else None,
            "review_share": _share([not decided(c) for c in cases]),
        }
    return out


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def learning_section(run: Any, folder: Path | None) -> str:
    """The report's learning curve (``details["learning"]`` of a ``--learn`` run): the table
    per tenth and the SVG, also written as ``learning_curve.svg`` in the run folder."""
    learning = run.details.get("learning")
    if not learning:
        return ""
    from casework.evals._plots import learning_curve_svg

    svg = learning_curve_svg(learning["rows"], learning["metric_label"])
    if folder is not None:
        (folder / "learning_curve.svg").write_text(svg, encoding="utf-8")
    rows = [
        [
            f"{r['part']} ({r['first']}–{r['last']})",
            _num(r["memory"]["accuracy"]),
            _num(r["none"]["accuracy"]),
            _num(r["memory"]["model_share"]),
            _num(r["none"]["model_share"]),
            _num(r["memory"]["review_share"]),
            _num(r["none"]["review_share"]),
            _num(r["memory"]["memory_share"]),
        ]
        for r in learning["rows"]
    ]
    summary = learning["summary"]
    said = (
        f"Second half: {_num(summary['memory']['second_half_accuracy'])} with memory, "
        f"{_num(summary['none']['second_half_accuracy'])} without. Model share last tenth / "
        f"first tenth: {_num(summary['memory']['model_share_last_over_first'])} with memory, "
        f"{_num(summary['none']['model_share_last_over_first'])} without. "
        f"{learning['examples']} examples learned ({learning['reviewed']} reviewed, "
        f"{learning['spot_checked']} spot checks); the run without memory is "
        f"<code>{_e(learning['baseline_run'])}</code>."
    )
    metric = _e(learning["metric_label"])
    return (
        "<h2>Learning curve</h2>"
        + _table(
            [
                "tenth (cases)",
                f"{metric}: memory",
                f"{metric}: none",
                "model share: memory",
                "model share: none",
                "to a person: memory",
                "to a person: none",
                "memory decided",
            ],
            rows,
            numeric=(1, 2, 3, 4, 5, 6, 7),
        )
        + f"<p class='note'>{said}</p><div class='panel'>{svg[svg.find('<svg') :]}</div>"
    )


def print_learning(learned: Any, console: Any) -> None:
    """The curve as a text table, the summary sentences, and where the runs and SVG are."""
    from rich.table import Table

    learning = learned.learning
    metric = learning["metric_label"]
    memory, baseline = learned.memory, learned.baseline
    console.print(
        f"[bold]{memory.app}[/] / {memory.strategy} · learning from review on "
        f"{len(memory.cases)} cases in order · model {memory.model or 'settings default'}",
        highlight=False,
    )
    console.print(f"dataset {memory.dataset}", highlight=False)
    table = Table(
        "tenth",
        "cases",
        f"{metric}\nmemory / none",
        "model share\nmemory / none",
        "to a person\nmemory / none",
        "memory\ndecided",
    )
    for r in learning["rows"]:
        m, n = r["memory"], r["none"]
        table.add_row(
            str(r["part"]),
            f"{r['first']}–{r['last']}",
            f"{_num(m['accuracy'])} / {_num(n['accuracy'])}",
            f"{_num(m['model_share'])} / {_num(n['model_share'])}",
            f"{_num(m['review_share'])} / {_num(n['review_share'])}",
            _num(m["memory_share"]),
        )
    console.print(table)
    s = learning["summary"]
    console.print(
        f"second half {metric}: {_num(s['memory']['second_half_accuracy'])} with memory, "
        f"{_num(s['none']['second_half_accuracy'])} without\n"
        f"model share last tenth / first tenth: "
        f"{_num(s['memory']['model_share_last_over_first'])} with memory "
        f"({_num(s['memory']['model_share_last'])} / {_num(s['memory']['model_share_first'])}), "
        f"{_num(s['none']['model_share_last_over_first'])} without "
        f"({_num(s['none']['model_share_last'])} / {_num(s['none']['model_share_first'])})\n"
        f"{learning['examples']} examples learned: {learning['reviewed']} reviewed, "
        f"{learning['spot_checked']} spot checks (share {learning['spot_check']:g}, seed "
        f"{learning['seed']})",
        highlight=False,
    )
    console.print(
        f"runs: {memory.run_id} (memory), {baseline.run_id} (none)"
        + (f"\nlearning curve: {learned.svg}" if learned.svg else ""),
        highlight=False,
    )
