"""Stored annotation runs: save one, list recent ones, what a batch already finished, and the
ones waiting for a person (list, open, settle once)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine

from casework.apps.hed.models import (
    REVIEW_DECIDED,
    REVIEW_WAITING,
    HedDecision,
    StoredAnnotation,
    decision_json,
)
from casework.apps.hed.tables import AnnotationRow
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before
from casework.stores.sql import as_utc, session_scope

__all__ = ["HedRepository"]


def _stored(row: AnnotationRow) -> StoredAnnotation:
    return StoredAnnotation(
        id=row.id,
        run_id=row.run_id,
        description=row.description,
        annotation=row.annotation,
        schema_version=row.schema_version,
        verdict=row.verdict,
        strategy=row.strategy,
        model=row.model,
        result=row.result,
        created_at=as_utc(row.created_at) or row.created_at,
        review_status=row.review_status,
        review_outcome=row.review_outcome,
        corrected_annotation=row.corrected_annotation,
        decided_by=row.decided_by,
        decided_at=as_utc(row.decided_at),
        review_note=row.review_note,
    )


class HedRepository:
    def __init__(self, engine: Engine, clock: Callable[[], datetime] | None = None) -> None:
        self.engine = engine
        self.clock = clock or (lambda: datetime.now(UTC))

    def save(
        self, decision: HedDecision, *, batch_key: str | None = None, row_id: str | None = None
    ) -> int:
        """Store a finished run; with a batch key, (batch_key, row_id) must be new. A run that
        is not VALID waits for a person."""
        run = decision.run
        usage = run.usage if run else None
        row = AnnotationRow(
            run_id=run.run_id if run else "",
            batch_key=batch_key,
            row_id=row_id,
            description=decision.description,
            schema_version=decision.schema_version,
            strategy=run.strategy if run else "",
            model=run.model if run else None,
            annotation=decision.annotation,
            verdict=decision.verdict,
            validation_status=decision.validation_status,
            is_valid=decision.is_valid,
            is_faithful=decision.is_faithful,
            is_complete=decision.is_complete,
            validation_attempts=decision.validation_attempts,
            total_iterations=decision.total_iterations,
            seconds=float(getattr(usage, "wall_seconds", 0.0) or 0.0),
            ended_by=str(run.ended_by) if run else "",
            result=decision_json(decision),
            created_at=self.clock(),
            review_status=None if decision.verdict == "VALID" else REVIEW_WAITING,
        )
        with session_scope(self.engine) as session:
            session.add(row)
            session.flush()
            return row.id

    def finished_rows(self, batch_key: str) -> dict[str, dict[str, Any]]:
        """row id -> stored result, for the rows of a batch already done."""
        with session_scope(self.engine) as session:
            rows = session.scalars(
                select(AnnotationRow).where(AnnotationRow.batch_key == batch_key)
            ).all()
            return {r.row_id or "": r.result for r in rows}

    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        with session_scope(self.engine) as session:
            rows = session.scalars(
                select(AnnotationRow).order_by(AnnotationRow.id.desc()).limit(limit)
            ).all()
            return [
                {
                    "id": r.id,
                    "created_at": r.created_at.isoformat(),
                    "strategy": r.strategy,
                    "verdict": r.verdict,
                    "annotation": r.annotation,
                    "description": r.description,
                }
                for r in rows
            ]

    # ------------------------------------------------------------------ review
    def _review_where(self, status: str, filters: ReviewFilters) -> list[Any]:
        return [
            AnnotationRow.review_status == status,
            *age_window(AnnotationRow.created_at, filters),
        ]

    def review_rows(
        self, status: str, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[StoredAnnotation]:
        """The runs in a review status, newest first, keyset-paged."""
        where = self._review_where(status, filters)
        where += keyset_before(AnnotationRow.created_at, AnnotationRow.id, before)
        with session_scope(self.engine) as session:
            rows = session.scalars(
                select(AnnotationRow)
                .where(*where)
                .order_by(AnnotationRow.created_at.desc(), AnnotationRow.id.desc())
                .limit(limit)
            ).all()
            return [_stored(r) for r in rows]

    def count_review(self, status: str, filters: ReviewFilters) -> int:
        with session_scope(self.engine) as session:
            where = self._review_where(status, filters)
            return int(session.scalar(select(func.count(AnnotationRow.id)).where(*where)) or 0)

    def annotation(self, annotation_id: int) -> StoredAnnotation | None:
        with session_scope(self.engine) as session:
            row = session.get(AnnotationRow, annotation_id)
            return None if row is None else _stored(row)

    def settle_review(
        self,
        annotation_id: int,
        *,
        outcome: str,
        corrected: str | None,
        decided_by: str,
        note: str,
    ) -> bool:
        """Settle a waiting run once: False when it was not waiting (somebody decided first)."""
        with session_scope(self.engine) as session:
            done = session.execute(
                update(AnnotationRow)
                .where(
                    AnnotationRow.id == annotation_id,
                    AnnotationRow.review_status == REVIEW_WAITING,
                )
                .values(
                    review_status=REVIEW_DECIDED,
                    review_outcome=outcome,
                    corrected_annotation=corrected,
                    decided_by=decided_by,
                    decided_at=self.clock(),
                    review_note=note or None,
                )
            )
            return bool(getattr(done, "rowcount", 0))
