"""``audit``: vanpools through a strategy, one or many, through the batch seam."""

from __future__ import annotations

import time

import typer
from rich.table import Table

from casework.apps.vanpool.cli.common import STRATEGY_HELP, checked_strategy, open_deps, run_config
from casework.clikit import (
    AddressOption,
    ConcurrencyOption,
    ExecutorOption,
    JsonOption,
    NoProgressOption,
    console,
    print_json,
    progress,
)
from casework.clikit import err_console as err
from casework.errors import InputError

__all__ = ["app"]

app = typer.Typer()


@app.command()
def audit(
    vanpool_ids: list[str] = typer.Argument(None, help="Vanpool ids (VP-###)."),
    all_: bool = typer.Option(False, "--all", help="Audit every vanpool."),
    strategy: str = typer.Option("cascade", "--strategy", help=STRATEGY_HELP),
    concurrency: ConcurrencyOption = 1,
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    as_json: JsonOption = False,
    no_progress: NoProgressOption = False,
) -> None:
    """Audit vanpools: all pass -> verified; any fail -> one case per vanpool and outreach."""
    from casework.apps.vanpool.models import check_id
    from casework.apps.vanpool.service import audit_many
    from casework.runtime.batch import BatchConfig, check_batch_config

    strategy = checked_strategy(strategy)
    config = BatchConfig(executor=executor, address=address, concurrency=concurrency)
    check_batch_config(config)  # a bad executor or address stops before anything is written
    deps = open_deps()
    if all_:
        ids = deps.repo.vanpool_ids()
    elif vanpool_ids:
        ids = list(dict.fromkeys(check_id("VP", v) for v in vanpool_ids))
        for v in ids:
            deps.repo.get_vanpool(v)  # unknown ids stop before any audit runs
    else:
        raise InputError("Name a vanpool (VP-101) or pass --all.")
    started = time.perf_counter()
    with progress(enabled=len(ids) > 1) as bar:
        task = bar.add_task(f"auditing ({executor})", total=len(ids))
        rows = audit_many(
            deps,
            ids,
            strategy,
            config,
            on_done=lambda _row: bar.advance(task),
            run_config=run_config(deps),
        )
    seconds = time.perf_counter() - started
    # Named vanpools that could not be audited fail the command; --all reports them and goes on.
    failed = not all_ and any(r["verdict"] == "error" for r in rows)
    if as_json:
        print_json(
            {
                "strategy": strategy,
                "executor": executor,
                "seconds": round(seconds, 2),
                "results": rows,
            }
        )
        if failed:
            raise typer.Exit(1)
        return
    table = Table("vanpool", "result", "failed checks", "case", "email")
    for r in rows:
        table.add_row(
            r["vanpool_id"],
            r["verdict"],
            ", ".join(r["failed_checks"]) or "-",
            r["case_id"] or "-",
            r["email"],
        )
    console.print(table)
    for r in rows:
        if r["verdict"] == "error":
            err.print(f"{r['vanpool_id']}: {r['reasoning']}", highlight=False)
    console.print(f"{len(rows)} vanpools audited in {seconds:.1f}s with {strategy} ({executor}).")
    if failed:
        raise typer.Exit(1)
