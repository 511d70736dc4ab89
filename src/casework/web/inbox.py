"""The inbox across apps: filters from the query string, keyset pages merged over providers.

Items are ordered newest first by (created_at, app, sort_id). A page asks each provider for
``limit + 1`` items after the cursor and keeps the first ``limit`` of the merge, so every page
costs the same indexed queries however deep it is.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from casework.errors import InputError
from casework.runtime.review_provider import (
    WAITING,
    Cursor,
    ReviewFilters,
    ReviewItem,
    ReviewProvider,
)

__all__ = ["AGES", "InboxCursor", "InboxPage", "filters_for", "inbox_page"]

AGES = {
    "any": "any age",
    "1d": "less than a day",
    "7d": "less than a week",
    "old": "older than a week",
}


def filters_for(status: str, age: str, now: datetime | None = None) -> ReviewFilters:
    now = now or datetime.now(UTC)
    if age not in AGES:
        raise InputError(f"Unknown age {age!r}; use one of: {', '.join(AGES)}.")
    after = before = None
    if age == "1d":
        after = now - timedelta(days=1)
    elif age == "7d":
        after = now - timedelta(days=7)
    elif age == "old":
        before = now - timedelta(days=7)
    return ReviewFilters(status=status or WAITING, created_after=after, created_before=before)


@dataclass(frozen=True)
class InboxCursor:
    created_at: datetime
    app: str
    sort_id: int

    def encode(self) -> str:
        return f"{self.created_at.isoformat()}~{self.app}~{self.sort_id}"

    @classmethod
    def decode(cls, text: str) -> InboxCursor:
        try:
            stamp, app, sort_id = text.split("~")
            created = datetime.fromisoformat(stamp)
            return cls(
                created if created.tzinfo else created.replace(tzinfo=UTC), app, int(sort_id)
            )
        except ValueError:
            raise InputError("That page link is broken; start again from the first page.") from None

    def for_app(self, app: str) -> Cursor:
        """The provider-level cursor: at the same instant, apps sort by name (descending)."""
        if app == self.app:
            return Cursor(self.created_at, self.sort_id)
        # An app named before the cursor's comes after it in the order: all its items at
        # that instant are still to come; one named after it has shown them all already.
        return Cursor(self.created_at, sys.maxsize if app < self.app else -1)


@dataclass(frozen=True)
class InboxPage:
    items: list[ReviewItem]
    next_cursor: InboxCursor | None


def _key(item: ReviewItem) -> tuple[datetime, str, int]:
    return (item.created_at, item.app, item.sort_id)


def inbox_page(
    providers: Mapping[str, ReviewProvider],
    filters: ReviewFilters,
    *,
    limit: int = 50,
    after: InboxCursor | None = None,
) -> InboxPage:
    merged: list[ReviewItem] = []
    for name, provider in providers.items():
        if filters.status not in provider.statuses:
            continue
        before = after.for_app(name) if after is not None else None
        merged += provider.items(filters, limit=limit + 1, before=before)
    merged.sort(key=_key, reverse=True)
    page = merged[:limit]
    more = len(merged) > limit and page
    nxt = InboxCursor(page[-1].created_at, page[-1].app, page[-1].sort_id) if more else None
    return InboxPage(items=page, next_cursor=nxt)
