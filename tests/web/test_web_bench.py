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
