"""``edge-cases``: the known invalid patterns (label + regex) ``check_edge_cases`` reads."""

from __future__ import annotations

import typer
from rich.table import Table

from casework.apps.receipts.cli.common import console, esc, open_deps
from casework.clikit import print_json

__all__ = ["app"]

app = typer.Typer(
    help="Known invalid patterns (label + regex) used by check_edge_cases.", no_args_is_help=True
)


@app.command("list")
def edge_list(
    label: str | None = typer.Option(None, help="Only this label type."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List active known invalid patterns."""
    from casework.apps.receipts.service import edge_cases

    cases = edge_cases(open_deps(with_vectors=False), label)
    if as_json:
        print_json([c.model_dump() for c in cases])
        return
    table = Table("id", "label", "pattern", "merchant", "reason")
    for c in cases:
        table.add_row(str(c.id), c.label_type, esc(c.pattern), c.merchant_name or "any", c.reason)
    console.print(table)


@app.command("add")
def edge_add(
    label: str = typer.Argument(..., help="Label type the pattern can't carry."),
    pattern: str = typer.Argument(
        ..., help="Regular expression matched against the whole word (case-insensitive)."
    ),
    reason: str = typer.Argument(..., help="Why: shown to the agent and in reviews."),
    merchant: str | None = typer.Option(None, help="Only for this merchant."),
) -> None:
    """Add a known invalid pattern."""
    from casework.apps.receipts.service import add_edge_case

    case = add_edge_case(open_deps(with_vectors=False), label, pattern, reason, merchant=merchant)
    console.print(f"edge case {case.id} added: {case.label_type} / {esc(case.pattern)}")


@app.command("remove")
def edge_remove(edge_case_id: int = typer.Argument(..., help="Id from `edge-cases list`.")) -> None:
    """Switch a known invalid pattern off (kept for the record)."""
    from casework.apps.receipts.service import remove_edge_case

    case = remove_edge_case(open_deps(with_vectors=False), edge_case_id)
    console.print(f"edge case {case.id} removed ({case.label_type} / {esc(case.pattern)})")
