"""``pairwise``: which of two stored runs answered better, case by case, by a judge."""

from __future__ import annotations

import typer
from rich.table import Table

from casework.clikit import LimitOption, NoProgressOption, console, progress

__all__ = ["app"]

app = typer.Typer()


@app.command()
def pairwise(
    run_a: str = typer.Argument(
        ..., metavar="RUN_A", help="Stored eval run (id, prefix or 'latest')."
    ),
    run_b: str = typer.Argument(..., metavar="RUN_B", help="The other run of the same dataset."),
    judge_model: str | None = typer.Option(
        None, "--judge-model", "-j", help="provider:name of the judge (default: the judge role)."
    ),
    limit: LimitOption = None,
    no_progress: NoProgressOption = False,
) -> None:
    """Which run's answers are better, case by case: a judge compares each pair in both orders."""
    from casework.apps.vanpool.service import compare_runs, judge_runs

    runs = compare_runs(run_a, run_b, judge_model, limit)
    a, b, spec = runs.a, runs.b, runs.judge
    with progress(enabled=len(runs.pairs) > 1) as bar:
        task = bar.add_task("judging pairs", total=len(runs.pairs))
        result = judge_runs(runs, on_done=lambda: bar.advance(task))
    table = Table("case", "better", "judge (A first, B first)")
    for c in result.cases:
        orders = ", ".join(c.get("orders", [])) or c.get("error", "")
        table.add_row(
            c["case_id"], {"a": "A", "b": "B"}.get(c["winner"], c["winner"] or "-"), orders
        )
    console.print(table)
    rate = result.b_win_rate
    console.print(
        f"A {a.run_id} ({a.model or a.strategy}) vs B {b.run_id} ({b.model or b.strategy}), "
        f"judge {spec}: A better {result.a_wins}, B better {result.b_wins}, ties {result.ties}"
        + (f", errors {result.errors}" if result.errors else "")
        + (f"; B wins {rate:.0%} of the decided pairs." if rate is not None else "."),
        highlight=False,
    )
