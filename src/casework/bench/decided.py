"""Seconds per decided case: each app's default strategy on a seeded sample of its dataset.

A case counts as decided when the strategy gave an answer rather than a needs-review: in a
cascade, when some layer was sure (``decided_by``); otherwise when the verdict is not
NEEDS_REVIEW and the case did not fail. The figure is the median wall time of the decided
cases (the time a user waits for an answer), beside the share decided. Runs go through the
evaluation harness (the one path strategies are measured by), on the settings' models.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from casework.evals import EvalConfig, run_suite
from casework.evals.layer_report import decided
from casework.registry import all_apps

__all__ = ["DECIDED_SECONDS_MAX", "check_decided", "print_decided_report", "run_decided_bench"]

DECIDED_SECONDS_MAX = {"receipts": 10.0, "vanpool": 10.0}
"""Median seconds per decided case that ``--check`` holds an app's default strategy to."""


def run_decided_bench(
    apps: Sequence[str] | None = None, *, sample: int = 10, seed: int = 1, settings: Any = None
) -> dict[str, Any]:
    results = {}
    for name, spec in all_apps().items():
        if (apps and name not in apps) or spec.eval_suite is None:
            continue
        suite = spec.eval_suite()
        run = run_suite(
            suite,
            EvalConfig(
                strategy=suite.default_strategy,
                sample=sample,
                seed=seed,
                concurrency=1,
                progress=False,
                store=False,
                report=False,
                settings=settings,
            ),
        )
        decided = [c for c in run.cases if decided(c)]
        seconds = [c.wall_seconds for c in decided]
        results[name] = {
            "strategy": suite.default_strategy,
            "cases": len(run.cases),
            "decided": len(decided),
            "decided_share": len(decided) / len(run.cases) if run.cases else None,
            "seconds_per_decided_p50": statistics.median(seconds) if seconds else None,
            "seconds_per_case_mean": statistics.fmean(c.wall_seconds for c in run.cases)
            if run.cases
            else None,
            "model_calls_mean": run.metrics.get("model_calls_mean"),
        }
    return {"sample": sample, "seed": seed, "apps": results}


def check_decided(result: dict[str, Any]) -> str | None:
    """A sentence naming the apps over their limit, or None."""
    over = []
    for name, limit in DECIDED_SECONDS_MAX.items():
        row = result["apps"].get(name)
        p50 = row and row["seconds_per_decided_p50"]
        if p50 is not None and p50 > limit:
            over.append(f"{name} {p50:.1f} s (limit {limit:.0f} s)")
    if over:
        return "median seconds per decided case over the limit: " + ", ".join(over) + "."
    return None


def print_decided_report(result: dict[str, Any], console: Console) -> None:
    table = Table(
        "app",
        "default strategy",
        "decided",
        "s / decided case (median)",
        "s / case (mean)",
        "model calls / case",
    )
    for name, row in result["apps"].items():
        p50 = row["seconds_per_decided_p50"]
        table.add_row(
            name,
            row["strategy"],
            f"{row['decided']} of {row['cases']}",
            "–" if p50 is None else f"{p50:.2f}",
            f"{row['seconds_per_case_mean']:.2f}",
            "–" if row["model_calls_mean"] is None else f"{row['model_calls_mean']:.2f}",
        )
    console.print(
        f"seconds per decided case · a seeded sample of {result['sample']} cases per app (seed {result['seed']})"
    )
    console.print(table)
