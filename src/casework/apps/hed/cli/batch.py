"""``batch``: every row of a CSV annotated through the platform's batch runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from casework.apps.hed.cli.common import SCHEMA_OPTION, console, err_console, validator_kind
from casework.clikit import AddressOption, ExecutorOption, print_json

__all__ = ["app"]

app = typer.Typer()


@app.command("batch")
def batch_cmd(
    file: Path = typer.Argument(..., help="CSV with a 'description' column (and optionally 'id')."),
    out: Path | None = typer.Option(
        None, "--out", help="JSON lines output. Default FILE.hed.jsonl"
    ),
    schema: str = SCHEMA_OPTION,
    strategy: str = typer.Option(
        "cascade",
        "--strategy",
        help="cascade (the look-up, then the bundled model, then a remote model when --model "
        "names one), or one strategy: loop, loop-no-eval, one-shot, rules (no model).",
    ),
    assess: bool = typer.Option(False, "--assess"),
    concurrency: int = typer.Option(2, "--concurrency", min=1, max=64),
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    model: str | None = typer.Option(None, "--model", help="provider:name for every text role."),
    validator: str = typer.Option("auto", "--validator", help="js, python or auto."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON document."),
    progress_bar: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a progress bar on stderr."
    ),
) -> None:
    """Annotate every row of a CSV through the platform's batch runner; resumable (finished
    rows are stored as they finish and skipped on a re-run)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from casework.apps.hed.deps import build_deps
    from casework.apps.hed.service import check_batch, run_batch
    from casework.runtime.batch import BatchConfig
    from casework.runtime.runconfig import RunConfig

    batch = BatchConfig(executor=executor, address=address, concurrency=concurrency)
    total = check_batch(file, schema=schema, strategy=strategy, config=batch)
    deps = build_deps(validator=validator_kind(validator))
    with Progress(
        TextColumn("hed batch"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err_console,
        disable=not progress_bar,
    ) as progress:
        task = progress.add_task("", total=total)

        def on_row(rid: str, data: dict[str, Any]) -> None:
            progress.update(task, advance=1, description=f"{rid}: {data.get('verdict', 'error')}")

        report = run_batch(
            file,
            deps,
            RunConfig.of(deps.settings, model),
            strategy=strategy,
            schema=schema,
            assess=assess,
            concurrency=concurrency,
            executor=executor,
            address=address,
            out=out,
            on_row=on_row,
        )
        progress.update(task, completed=total)
    if as_json:
        print_json(report.to_dict())
        return
    verdicts = ", ".join(f"{k} {v}" for k, v in sorted(report.verdicts.items())) or "none"
    console.print(
        f"{report.total} rows: {report.done} annotated, {report.skipped} already done, "
        f"{report.failed} failed; verdicts: {verdicts}; results in {report.out}",
        highlight=False,
    )
