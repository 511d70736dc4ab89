"""Keyset pages merged over several providers, including items created at the same instant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from casework.errors import InputError
from casework.runtime.review_provider import WAITING, Cursor, ReviewFilters, ReviewItem
from casework.web.inbox import InboxCursor, filters_for, inbox_page

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


class ListProvider:
    """An in-memory provider: what a real one answers, over a list."""

    statuses = [WAITING]

    def __init__(self, app: str, stamps: list[datetime]) -> None:
        self.app = app
        self.rows = [
            ReviewItem(app, "thing", str(i), i, f"{app} {i}", WAITING, ts)
            for i, ts in enumerate(stamps, start=1)
        ]
        self.calls: list[Cursor | None] = []

    def items(self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None):
        self.calls.append(before)
        rows = [
            r
            for r in self.rows
            if (filters.created_after is None or r.created_at >= filters.created_after)
            and (filters.created_before is None or r.created_at < filters.created_before)
            and (before is None or (r.created_at, r.sort_id) < (before.created_at, before.sort_id))
        ]
        return sorted(rows, key=lambda r: (r.created_at, r.sort_id), reverse=True)[:limit]


def _walk(providers, limit: int) -> list[tuple[str, str]]:
    seen, cursor = [], None
    while True:
        page = inbox_page(providers, ReviewFilters(), limit=limit, after=cursor)
        seen += [(i.app, i.id) for i in page.items]
        if page.next_cursor is None:
            return seen
        cursor = InboxCursor.decode(page.next_cursor.encode())


def test_pages_cover_every_item_once_in_order_even_at_one_instant() -> None:
    # Four items of each app share one timestamp; the rest are spread out.
    same = [T0] * 4
    a = ListProvider("alpha", same + [T0 - timedelta(minutes=m) for m in range(1, 6)])
    b = ListProvider("beta", same + [T0 - timedelta(minutes=m, seconds=30) for m in range(6)])
    providers = {"alpha": a, "beta": b}
    everything = sorted(
        a.rows + b.rows, key=lambda r: (r.created_at, r.app, r.sort_id), reverse=True
    )
    expected = [(r.app, r.id) for r in everything]
    for limit in (1, 3, 4, 5, 50):
        assert _walk(providers, limit) == expected, limit
    # Each provider is asked for one more than a page, never for everything before it.
    a.calls.clear()
    inbox_page(providers, ReviewFilters(), limit=3)
    assert a.calls == [None]


def test_cursor_round_trip_and_age_filters() -> None:
    cursor = InboxCursor(T0, "receipts", 42)
    assert InboxCursor.decode(cursor.encode()) == cursor
    assert cursor.for_app("receipts") == Cursor(T0, 42)
    assert cursor.for_app("documents").sort_id > 10**15  # all of its items at T0 still to come
    assert cursor.for_app("vanpool").sort_id == -1  # all of its items at T0 already shown
    with pytest.raises(InputError, match="first page"):
        InboxCursor.decode("nonsense")
    now = T0
    assert filters_for(WAITING, "1d", now).created_after == now - timedelta(days=1)
    old = filters_for(WAITING, "old", now)
    assert (old.created_after, old.created_before) == (None, now - timedelta(days=7))
    with pytest.raises(InputError, match="Unknown age"):
        filters_for(WAITING, "ancient", now)
