"""``review``: the NEEDS_REVIEW queue: list, accept, reject."""

from __future__ import annotations

import typer
from rich.table import Table

from casework.apps.receipts.cli.common import console, esc, open_deps
from casework.clikit import print_json

__all__ = ["app"]

app = typer.Typer(help="The NEEDS_REVIEW queue: list, accept, reject.", invoke_without_command=True)


@app.callback()
def review(
    ctx: typer.Context,
    merchant: str | None = typer.Option(None, help="Only this merchant."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the NEEDS_REVIEW queue (then `review accept ID` or `review reject ID`)."""
    if ctx.invoked_subcommand is not None:
        return
    from casework.apps.receipts.service import review_entries

    queue = review_entries(open_deps(with_vectors=False), merchant=merchant)
    if as_json:
        print_json([e.label.model_dump(mode="json") | {"receipt": e.receipt} for e in queue])
        return
    if not queue:
        console.print("The review queue is empty.")
        return
    table = Table(
        "id", "receipt", "line", "word", "text", "label", "instead of", "confidence", "reasoning"
    )
    for entry in queue:
        lab, instead = entry.label, entry.instead_of or ""
        table.add_row(
            str(lab.id),
            entry.receipt,
            str(lab.line_id),
            str(lab.word_id),
            esc(lab.word_text),
            lab.label_type,
            instead,
            f"{lab.confidence:.0f}" if lab.confidence is not None else "",
            esc(lab.reasoning[:90]),
        )
    console.print(table)


def _decide(label_id: int, accept: bool, reviewer: str, note: str, as_json: bool) -> None:
    from casework.apps.receipts.service import review_decide

    rows = review_decide(open_deps(), label_id, accept=accept, reviewer=reviewer, note=note)
    if as_json:
        print_json([lab.model_dump(mode="json") for lab in rows])
        return
    for lab in rows:
        console.print(
            f"label {lab.id}: {lab.label_type} {lab.status.value} (replaces {lab.replaces_id or '-'}) by {lab.validated_by}"
        )


@app.command()
def accept(
    label_id: int = typer.Argument(..., help="Label id from `receipts review`."),
    reviewer: str = typer.Option("reviewer", help="Who decided (written to the audit trail)."),
    note: str = typer.Option("", help="Why."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Accept a label under review: it becomes VALID (and the label it replaces INVALID)."""
    _decide(label_id, True, reviewer, note, as_json)


@app.command()
def reject(
    label_id: int = typer.Argument(..., help="Label id from `receipts review`."),
    reviewer: str = typer.Option("reviewer", help="Who decided (written to the audit trail)."),
    note: str = typer.Option("", help="Why."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Reject a label under review: it becomes INVALID; the label it would replace stays."""
    _decide(label_id, False, reviewer, note, as_json)
