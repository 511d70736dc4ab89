"""Inbox page loads with 10,000 waiting items: prints the figures (limits live in make bench)."""

from __future__ import annotations

import json

import pytest

from casework.web.bench import run_inbox_bench


@pytest.mark.slow
def test_inbox_with_ten_thousand_items_pages_through_all_of_them() -> None:
    figures = run_inbox_bench(10_000, repeats=3)
    print("\ninbox bench:", json.dumps(figures))
    assert figures["items_walked"] == 10_000
    assert figures["pages"] == 200


def test_bench_inbox_command_prints_one_json_document() -> None:
    from typer.testing import CliRunner

    from casework.cli import app

    result = CliRunner().invoke(
        app, ["bench", "inbox", "--items", "120", "--repeats", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert (figures["items"], figures["items_walked"], figures["pages"]) == (120, 120, 3)
    assert figures["first_page_ms"] > 0
    bad = CliRunner().invoke(app, ["bench", "inbox", "--items", "0"])
    assert bad.exit_code == 2
