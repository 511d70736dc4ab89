"""``casework receipts …``: import, seed, inspect, validate, review, harmonise.

Thin: every command builds deps, calls ``service`` and prints (evaluation is ``casework eval
receipts``). Errors a user can cause raise CaseworkError subclasses; the root CLI prints them as
one sentence. One module per job: ``data`` (import, index, read), ``validate``, ``harmonize``,
``review`` (the NEEDS_REVIEW queue) and ``edge_cases``; each is a Typer app this one merges
(or mounts, for the groups) in the order ``--help`` lists them.
"""

from __future__ import annotations

import typer

from casework.apps.receipts.cli import data, edge_cases, harmonize, review, validate

__all__ = ["app"]

app = typer.Typer(
    help="Validate suggested labels of receipt words. Start with `casework receipts seed`, then "
    "`casework receipts show costco` and `casework receipts validate costco 40 2 GRAND_TOTAL`.",
    no_args_is_help=True,
)
app.add_typer(data.app)
app.add_typer(validate.app)
app.add_typer(harmonize.app)
app.add_typer(review.app, name="review")
app.add_typer(edge_cases.app, name="edge-cases")
