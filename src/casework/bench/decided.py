"""Seconds per decided case: each app's default strategy on a seeded sample of its dataset.

A case counts as decided when the strategy gave an answer rather than a needs-review
(``casework.evals.layer_report.decided``): in a cascade, when some layer was sure
(``decided_by``); otherwise when the verdict is not NEEDS_REVIEW and the case did not fail.
The figure is the median wall time of the decided cases (the time a user waits for an
answer), beside the share decided. Runs go through the evaluation harness (the one path
strategies are measured by), on the settings' models.

With ``memory``, each app with a memory of verified answers (``AppSpec.examples``) is also
measured with and without it: the seeded sample of its learning dataset
(``EvalSuite.learn_dataset``) is cut in two, the **first half imported as examples** into a
store of the run's own, and the second half timed twice, on an empty memory and on the
warmed one (the same cases, in the same order).

The first case a model answered for is reported apart from the later ones: it pays for reading
the app's prompt opening (unless a warm start restored it, ``casework.llm.local.warm``), the
later ones find it cached.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from casework.evals import EvalConfig, run_suite
from casework.evals.layer_report import asked_model, decided
from casework.evals.results import CaseResult, EvalRun
from casework.registry import all_apps

__all__ = [
    "DECIDED_SECONDS_MAX",
    "check_decided",
    "first_and_later_model_cases",
    "print_decided_report",
    "run_decided_bench",
]

DECIDED_SECONDS_MAX = {"receipts": 10.0, "vanpool": 10.0}
"""Median seconds per decided case that ``--check`` holds an app's default strategy to."""


def first_and_later_model_cases(cases: Sequence[CaseResult]) -> tuple[float | None, float | None]:
    """Seconds of the first case (in run order) a model answered for, and the median of the
    later ones; None where there is none."""
    asked = [c.wall_seconds for c in cases if asked_model(c)]
    first = asked[0] if asked else None
    return first, statistics.median(asked[1:]) if len(asked) > 1 else None


def _row(run: EvalRun) -> dict[str, Any]:
    done = [c for c in run.cases if decided(c)]
    seconds = [c.wall_seconds for c in done]
    first, later = first_and_later_model_cases(run.cases)
    return {
        "first_model_case_seconds": first,
        "later_model_cases_p50": later,
        "strategy": run.strategy,
        "cases": len(run.cases),
        "decided": len(done),
        "decided_share": len(done) / len(run.cases) if run.cases else None,
        "seconds_per_decided_p50": statistics.median(seconds) if seconds else None,
        "seconds_per_case_mean": statistics.fmean(c.wall_seconds for c in run.cases)
        if run.cases
        else None,
        "model_calls_mean": run.metrics.get("model_calls_mean"),
    }


def _quiet(settings: Any, **fields: Any) -> EvalConfig:
    return EvalConfig(
        concurrency=1, progress=False, store=False, report=False, settings=settings, **fields
    )


def _memory_rows(spec: Any, suite: Any, sample: int, seed: int, settings: Any) -> dict[str, Any]:
    """The second half of the learning dataset's sample, on an empty memory and on one that
    holds the first half."""
    from casework.config import get_settings
    from casework.evals.learning import Learner, example_or_reason, isolated_store
    from casework.evals.runplan import run_cases

    settings = settings or get_settings()
    hook = spec.examples()
    cases, name, _ = run_cases(
        suite, _quiet(settings, dataset=suite.learn_dataset, sample=sample, seed=seed)
    )
    half = len(cases) // 2
    warm, timed = cases[:half], cases[half:]
    # a case the hook does not take is no example (a mixed dataset)
    kept = [c for c in warm if example_or_reason(hook, c) is None]
    rows: dict[str, Any] = {"dataset": name, "imported": len(kept)}
    for mode, preload in (("none", []), ("memory", kept)):
        with isolated_store(settings) as store:
            run = run_suite(
                suite,
                _quiet(
                    settings,
                    strategy=suite.default_strategy,
                    cases=timed,
                    deps_settings=store,
                    case_hook=Learner(spec.name, hook, learn=False, preload=preload),
                ),
            )
        rows[mode] = _row(run) | {"model_share": run.metrics.get("model_share")}
    return rows


def run_decided_bench(
    apps: Sequence[str] | None = None,
    *,
    sample: int = 10,
    seed: int = 1,
    settings: Any = None,
    memory: bool = False,
) -> dict[str, Any]:
    results = {}
    with_memory = {}
    for name, spec in all_apps().items():
        if (apps and name not in apps) or spec.eval_suite is None:
            continue
        suite = spec.eval_suite()
        run = run_suite(
            suite, _quiet(settings, strategy=suite.default_strategy, sample=sample, seed=seed)
        )
        results[name] = _row(run)
        if memory and spec.examples is not None:
            with_memory[name] = _memory_rows(spec, suite, sample, seed, settings)
    out: dict[str, Any] = {"sample": sample, "seed": seed, "apps": results}
    if memory:
        out["memory"] = with_memory
    return out


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


def _cells(row: dict[str, Any]) -> list[str]:
    p50 = row["seconds_per_decided_p50"]
    return [
        f"{row['decided']} of {row['cases']}",
        "–" if p50 is None else f"{p50:.2f}",
        f"{row['seconds_per_case_mean']:.2f}",
        "–" if row["model_calls_mean"] is None else f"{row['model_calls_mean']:.2f}",
        _seconds(row.get("first_model_case_seconds")),
        _seconds(row.get("later_model_cases_p50")),
    ]


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def print_decided_report(result: dict[str, Any], console: Console) -> None:
    heads = ["decided", "s / decided case (median)", "s / case (mean)", "model calls / case"]
    heads += ["s, first model case", "s, later model cases (median)"]
    table = Table("app", "default strategy", *heads)
    for name, row in result["apps"].items():
        table.add_row(name, row["strategy"], *_cells(row))
    console.print(
        f"seconds per decided case · a seeded sample of {result['sample']} cases per app (seed {result['seed']})"
    )
    console.print(table)
    memory = result.get("memory")
    if memory is None:
        return
    if not memory:
        console.print("No app measured keeps a memory of verified answers.")
        return
    table = Table("app", "memory", *heads)
    for name, rows in memory.items():
        for mode in ("none", "memory"):
            table.add_row(name, mode, *_cells(rows[mode]))
    said = "; ".join(
        f"{name}: {rows['imported']} examples from the first half of {rows['dataset']}"
        for name, rows in memory.items()
    )
    console.print(
        f"with and without memory · the second half of each sample timed twice ({said})",
        highlight=False,
    )
    console.print(table)
