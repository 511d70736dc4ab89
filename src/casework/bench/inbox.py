"""``casework bench inbox``: the web inbox's page loads with many waiting items, reported.

The measuring lives with the web UI (``casework.web.bench.run_inbox_bench``); this module
runs it behind a progress bar and prints the figures.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from casework.clikit import progress

__all__ = ["print_inbox_report", "run_inbox"]

ROWS = (
    ("first_page_ms", "first page"),
    ("page_median_ms", "any page (median)"),
    ("page_max_ms", "slowest page"),
    ("last_page_ms", "last page"),
    ("app_filter_ms", "filtered by app"),
    ("age_1d_ms", "less than a day old"),
    ("age_old_ms", "older than a week"),
    ("decided_ms", "decided items"),
    ("decision_page_ms", "one decision page"),
)


def run_inbox(items: int, repeats: int, *, show_progress: bool = True) -> dict[str, Any]:
    from casework.web.bench import run_inbox_bench

    with progress(enabled=show_progress) as bar:
        task = bar.add_task("inbox bench", total=None)

        def step(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=total)

        return run_inbox_bench(items, repeats, step=step)


def print_inbox_report(result: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(
        title=f"Web inbox: {result['items']:,} waiting items, {result['pages']} pages "
        f"({result['items_walked']:,} items walked; seeded in {result['seed_seconds']} s)"
    )
    table.add_column("page load")
    table.add_column("ms", justify="right")
    for key, label in ROWS:
        table.add_row(label, f"{result[key]:.1f}")
    console.print(table)
