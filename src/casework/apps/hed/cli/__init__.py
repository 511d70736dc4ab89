"""``casework hed …``: validate, annotate, batch, vocabulary, bench, demo.

Thin: every command calls ``service`` and prints; errors a user can cause raise
``CaseworkError`` subclasses and the root CLI prints them as one sentence. One module per job:
``validate`` (strings and files, the validators' bench), ``annotate`` (a description, an image
or an events file's levels), ``batch`` (a CSV through the batch runner) and ``explore`` (the
vocabulary, the demo, the stored runs); this app merges them in the order ``--help`` lists.
"""

from __future__ import annotations

import typer

from casework.apps.hed.cli import annotate, batch, explore, validate

__all__ = ["app"]

app = typer.Typer(
    help='Natural language to valid HED annotations. Try `casework hed validate "Sensory-event, '
    'Red"` and `casework hed annotate "A red circle appears on the screen"`.',
    no_args_is_help=True,
)
app.add_typer(validate.app)
app.add_typer(annotate.app)
app.add_typer(batch.app)
app.add_typer(explore.app)
