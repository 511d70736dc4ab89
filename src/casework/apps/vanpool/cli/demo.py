"""``demo``: seed, audit every vanpool with the rules auditor, walk one case."""

from __future__ import annotations

import typer

from casework.clikit import console

__all__ = ["app"]

app = typer.Typer()


@app.command()
def demo() -> None:
    """Seed, audit every vanpool with the rules auditor, walk one case through its lifecycle."""
    from casework.apps.vanpool.demo import run_demo

    run_demo(console)
