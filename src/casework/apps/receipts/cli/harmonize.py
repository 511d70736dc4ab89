"""``harmonize``: find outlier labels, validate a replacement for each, apply the fixes."""

from __future__ import annotations

from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from casework.apps.receipts.cli.common import console, esc, open_deps, run_config
from casework.clikit import AddressOption, ConcurrencyOption, ExecutorOption, print_json, progress
from casework.registry import strategy_named

__all__ = ["app"]

app = typer.Typer()


@app.command()
def harmonize(
    merchant: str | None = typer.Option(None, help="Only this merchant's labels (default: all)."),
    strategy: str = typer.Option(
        "baseline", help="Validator for the suggestions: baseline, rules or agent."
    ),
    model: str | None = typer.Option(None, help="provider:name for the agent."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan the fixes without writing them."),
    concurrency: ConcurrencyOption = 2,
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    limit: int | None = typer.Option(None, min=1, help="Validate at most this many outliers."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Find outlier labels, validate a replacement for each, apply fixes by confidence.

    The validations go through the batch seam: --executor ray runs them on a Ray cluster
    (--address), where each worker opens the stores and the model itself.
    """
    from casework.apps.receipts.service import STRATEGIES, check_merchant
    from casework.apps.receipts.service import harmonize as run_harmonize
    from casework.runtime.batch import BatchConfig, check_batch_config

    strategy_named(STRATEGIES, strategy)  # refused before the stores open
    check_batch_config(BatchConfig(executor=executor, address=address, concurrency=concurrency))
    deps = open_deps()
    check_merchant(deps, merchant)  # refused before the progress bar shows
    bar = progress(
        TextColumn("[bold]harmonising[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        enabled=not as_json,
    )
    with bar:
        task = bar.add_task("validate", total=None)
        report = run_harmonize(
            deps,
            strategy,
            merchant=merchant,
            dry_run=dry_run,
            concurrency=concurrency,
            executor=executor,
            address=address,
            config=run_config(deps, model),
            limit=limit,
            on_found=lambda n: bar.update(task, total=n),
            on_done=lambda o, r: bar.advance(task),
        )
    if as_json:
        print_json(report.to_dict())
        return
    _print_harmonize(report)


def _print_harmonize(report: Any) -> None:
    data = report.to_dict()
    table = Table(
        "receipt",
        "line",
        "word",
        "text",
        "label",
        "suggestion",
        "decision",
        "conf",
        "outcome",
        title="outliers",
    )
    for f in data["fixes"][:40]:
        table.add_row(
            f["receipt"],
            str(f["line_id"]),
            str(f["word_id"]),
            esc(f["word"]),
            f["label"],
            f["suggestion"] or "-",
            f["decision"] or "error",
            f"{f['confidence']:.0f}" if f["confidence"] is not None else "",
            f["outcome"],
        )
    if data["fixes"]:
        console.print(table)
    if len(data["fixes"]) > 40:
        console.print(f"... and {len(data['fixes']) - 40} more (--json for all)")
    summary = Table(
        "", "count", title="summary" + (" (dry run: nothing written)" if report.dry_run else "")
    )
    summary.add_row("labels scanned", str(data["labels_scanned"]))
    summary.add_row("outliers", str(data["outliers"]))
    for outcome, n in data["outcomes"].items():
        summary.add_row(outcome, str(n))
    summary.add_row("cache hits / misses", f"{data['cache']['hits']} / {data['cache']['misses']}")
    summary.add_row("seconds", f"{data['seconds']:.1f}")
    console.print(summary)
    if report.vector_error:
        console.print(
            f"[yellow]warning:[/] similar words unavailable ({report.vector_error}); only edge cases found outliers."
        )
