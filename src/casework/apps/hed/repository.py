"""Stored annotation runs: save one, list recent ones, and what a batch already finished."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from casework.apps.hed.models import HedDecision, decision_json
from casework.apps.hed.tables import AnnotationRow
from casework.stores.sql import session_scope

__all__ = ["HedRepository"]


class HedRepository:
    def __init__(self, engine: Engine, clock: Callable[[], datetime] | None = None) -> None:
        self.engine = engine
        self.clock = clock or (lambda: datetime.now(UTC))

    def save(
        self, decision: HedDecision, *, batch_key: str | None = None, row_id: str | None = None
    ) -> int:
        """Store a finished run; with a batch key, (batch_key, row_id) must be new."""
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
