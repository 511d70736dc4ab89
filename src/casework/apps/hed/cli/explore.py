"""``vocabulary`` (the schema as the prompt carries it), ``demo`` and ``history`` (the stored
annotation runs)."""

from __future__ import annotations

import typer

from casework.apps.hed.cli.common import SCHEMA_OPTION, console, err_console
from casework.clikit import print_json

__all__ = ["app"]

app = typer.Typer()


@app.command("vocabulary")
def vocabulary_cmd(
    schema: str = SCHEMA_OPTION,
    full: bool = typer.Option(False, "--full", help="Every tag (not the compact prompt form)."),
    as_json: bool = typer.Option(False, "--json", help="Tags with long form, units, rules."),
) -> None:
    """The schema's vocabulary as the annotation prompt carries it (short form only)."""
    from casework.apps.hed.service import vocabulary_listing

    listing = vocabulary_listing(schema, full=full)
    if as_json:
        print_json(listing.tags)
        return
    console.print(listing.text, highlight=False, markup=False)
    err_console.print(f"{len(listing.tags)} tags; this text is about {listing.tokens} tokens")


@app.command("demo")
def demo_cmd(model: str | None = typer.Option(None, "--model")) -> None:
    """Validate two strings with both validators, then annotate one event with the agent loop."""
    from casework.apps.hed.demo import run_demo

    run_demo(console, model=model)


@app.command("history")
def history_cmd(
    limit: int = typer.Option(20, "--limit", min=1, max=1000),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """The most recent stored annotation runs (from `annotate` and `batch`)."""
    from casework.apps.hed.deps import build_deps

    rows = build_deps().repo.recent(limit)
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print('No annotation runs stored yet; try `casework hed annotate "A beep."`.')
    for r in rows:
        console.print(
            f"{r['id']:>5} {r['created_at'][:19]} {r['strategy']:<13} {r['verdict']:<12} "
            f"{r['annotation']}  <- {r['description'][:60]}",
            highlight=False,
            markup=False,
        )
