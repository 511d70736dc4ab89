"""``seed`` (the bundled roster) and ``import`` (a roster file)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from casework.apps.vanpool.cli.common import open_deps
from casework.clikit import JsonOption, console, print_json

__all__ = ["app"]

app = typer.Typer()


@app.command()
def seed(as_json: JsonOption = False) -> None:
    """Load the bundled synthetic roster (40 vanpools, 300 employees; idempotent)."""
    from casework.apps.vanpool import service

    deps = open_deps()
    counts = service.import_roster(deps).added
    _print_counts(deps, counts, as_json)


@app.command("import")
def import_cmd(
    file: Path = typer.Argument(
        ..., help="Roster file, .csv or .json, e.g. an HR export (columns in the app README)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check the file against the store and write nothing."
    ),
    as_json: JsonOption = False,
) -> None:
    """Import your own roster: every row is checked first, every refused row is listed at
    once (row, column, value, what to write instead) and then nothing is written (exit 2)."""
    from casework.apps.vanpool import service
    from casework.apps.vanpool.models import RosterRefused

    deps = open_deps()
    try:
        report = service.import_roster(deps, file, dry_run=dry_run)
    except RosterRefused as exc:
        if not as_json:
            raise  # the root prints it: one line per problem, exit 2
        print_json(
            {
                "file": exc.source,
                "dry_run": dry_run,
                "written": False,
                "rows": exc.rows,
                "refused_rows": len({p.row for p in exc.problems}),
                "problems": [p.to_dict() for p in exc.problems],
            }
        )
        raise typer.Exit(exc.exit_code) from None
    total = deps.repo.counts()
    if as_json:
        print_json({**asdict(report), "written": not dry_run, "total": total})
        return
    blank = f" ({report.blank_rows} blank rows left out)" if report.blank_rows else ""
    f = report.in_file
    console.print(
        f"{report.file}: {report.rows} rows check out{blank}: {f['employees']} employees, "
        f"{f['vanpools']} vanpools, {f['riders']} riders, {f['shifts']} shifts.",
        highlight=False,
    )
    if report.repaired:
        fixed = ", ".join(f"{n} {kind}" for kind, n in report.repaired.items())
        console.print(f"read in the canonical form: {fixed}.", highlight=False)
    a = report.added
    added = (
        f"{a['employees']} employees, {a['vanpools']} vanpools, {a['riders']} riders, "
        f"{a['shifts']} shifts"
    )
    if dry_run:
        console.print(f"an import would add {added}; nothing written (--dry-run).", highlight=False)
        return
    console.print(
        f"added {added}; the store now has {total['vanpools']} vanpools, "
        f"{total['employees']} employees, {total['riders']} riders.",
        highlight=False,
    )


def _print_counts(deps: Any, counts: dict[str, int], as_json: bool) -> None:
    total = deps.repo.counts()
    if as_json:
        print_json({"added": counts, "total": total})
        return
    console.print(
        f"added {counts['employees']} employees, {counts['vanpools']} vanpools, "
        f"{counts['riders']} riders, {counts['shifts']} shifts; the store now has "
        f"{total['vanpools']} vanpools, {total['employees']} employees, {total['riders']} riders."
    )
