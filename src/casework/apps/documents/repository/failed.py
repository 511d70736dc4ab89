"""Failed extractions, as the review inbox lists them, with whether somebody decided on each."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    String,
    cast,
    column,
    exists,
    func,
    literal,
    select,
    table,
    text,
)

from casework.apps.documents.models import (
    FailedExtraction,
)
from casework.apps.documents.repository.documents import DocumentStore
from casework.apps.documents.repository.extractions import extraction_info
from casework.apps.documents.tables import (
    DocumentRow,
    ExtractionRow,
)
from casework.errors import NotFoundError
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before
from casework.stores.sql import session_scope

REVIEW_THREAD_PREFIX = "documents:extraction:"
"""A failed extraction's thread in the side-effect journal: the prefix and its id."""
REVIEW_ACTION = "documents_review"
"""The journal action of a person's decision on a failed extraction (retry or reviewed)."""

# The journal's table, read for the review listing (the journal answers one key at a time).
_effects = table("casework_side_effects", column("thread_id"), column("action"), column("status"))


def _reviewed() -> Any:
    """A failed extraction somebody decided on: its journal entry is done."""
    return exists().where(
        _effects.c.thread_id == literal(REVIEW_THREAD_PREFIX) + cast(ExtractionRow.id, String),
        _effects.c.action == REVIEW_ACTION,
        _effects.c.status == "done",
    )


class FailedExtractionStore(DocumentStore):
    """The failed extractions across users, for the review inbox."""

    def _failed_where(self, decided: bool, filters: ReviewFilters) -> list[Any]:
        # Real users only: the evaluation's and the demo's owners have negative ids.
        where: list[Any] = [ExtractionRow.status == "failed", ExtractionRow.owner_id >= 0]
        where.append(_reviewed() if decided else ~_reviewed())
        return where + age_window(ExtractionRow.updated_at, filters)

    def failed_extractions(
        self, decided: bool, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[FailedExtraction]:
        """Failed extractions of every real user, newest failure first (an extraction's
        failure time is its last update)."""
        where = self._failed_where(decided, filters)
        where += keyset_before(ExtractionRow.updated_at, ExtractionRow.id, before)
        q = (
            select(ExtractionRow, DocumentRow.filename, DocumentRow.media_type)
            .join(DocumentRow, DocumentRow.id == ExtractionRow.document_id)
            .where(*where)
            .order_by(ExtractionRow.updated_at.desc(), ExtractionRow.id.desc())
            .limit(limit)
        )
        with session_scope(self.engine) as s:
            return [
                FailedExtraction(extraction_info(ext), ext.owner_id or 0, filename, media_type)
                for ext, filename, media_type in s.execute(q).all()
            ]

    def count_failed_extractions(self, decided: bool, filters: ReviewFilters) -> int:
        q = (
            select(func.count())
            .select_from(ExtractionRow)
            .where(*self._failed_where(decided, filters))
        )
        with session_scope(self.engine) as s:
            return int(s.scalar(q) or 0)

    def failed_extraction(self, extraction_id: int) -> FailedExtraction:
        with session_scope(self.engine) as s:
            found = s.execute(
                select(ExtractionRow, DocumentRow.filename, DocumentRow.media_type)
                .join(DocumentRow, DocumentRow.id == ExtractionRow.document_id)
                .where(ExtractionRow.id == extraction_id, ExtractionRow.owner_id >= 0)
            ).one_or_none()
            if found is None or found[0].status != "failed":
                raise NotFoundError(
                    f"No failed extraction {extraction_id}; open one from the inbox."
                )
            ext, filename, media_type = found
            return FailedExtraction(extraction_info(ext), ext.owner_id or 0, filename, media_type)

    def user_name(self, user_id: int) -> str | None:
        """A user's name (the platform's users table), for a run made on their behalf."""
        with session_scope(self.engine) as s:
            name = s.scalar(text("SELECT name FROM users WHERE id = :id"), {"id": user_id})
            return str(name) if name is not None else None
