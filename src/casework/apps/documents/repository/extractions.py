"""Extractions: their fields, edited by JSON path (the spec's SQL functions on PostgreSQL,
SQLite's JSON functions on SQLite, the same path checks before both), and their status.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    func,
    select,
    text,
    update,
)
from sqlalchemy.orm import Session

from casework.apps.documents import rules
from casework.apps.documents.models import (
    ExtractionInfo,
)
from casework.apps.documents.repository.documents import DocumentStore, utc_now
from casework.apps.documents.tables import (
    ExtractionRow,
)
from casework.errors import InputError, NotFoundError
from casework.stores.sql import session_scope


class CompletionCheck(InputError):
    """``complete_extraction``'s refusal ("Cannot complete: no fields extracted")."""


class ExtractionStore(DocumentStore):
    """A user's extractions."""

    def create_extraction(
        self, user_id: int, document_id: int, *, requested: list[str] | None = None
    ) -> ExtractionInfo:
        """The ``in_progress`` row the agent writes into (made before the agent starts)."""
        with session_scope(self.engine) as s:
            self._doc(s, user_id, document_id)
            now = utc_now()
            row = ExtractionRow(
                owner_id=user_id,
                document_id=document_id,
                status="in_progress",
                reason="",
                mode="custom" if requested else "auto",
                requested_fields=list(requested) if requested else None,
                fields={},
                confidence_scores={},
                method="agent",
                created_at=now,
                updated_at=now,
            )
            s.add(row)
            s.flush()
            return extraction_info(row)

    def _ext(self, s: Session, user_id: int, extraction_id: int) -> ExtractionRow:
        row = s.scalars(
            select(ExtractionRow).where(
                ExtractionRow.id == extraction_id, ExtractionRow.owner_id == user_id
            )
        ).one_or_none()
        if row is None:
            raise NotFoundError(
                f"No extraction {extraction_id}; list yours with `casework documents show DOC`."
            )
        return row

    def get_extraction(self, user_id: int, extraction_id: int) -> ExtractionInfo:
        with session_scope(self.engine) as s:
            return extraction_info(self._ext(s, user_id, extraction_id))

    def extractions_of(self, user_id: int, document_id: int) -> list[ExtractionInfo]:
        with session_scope(self.engine) as s:
            self._doc(s, user_id, document_id)
            rows = s.scalars(
                select(ExtractionRow)
                .where(ExtractionRow.document_id == document_id, ExtractionRow.owner_id == user_id)
                .order_by(ExtractionRow.id)
            ).all()
            return [extraction_info(r) for r in rows]

    def set_fields(
        self,
        user_id: int,
        extraction_id: int,
        fields: dict[str, Any],
        confidences: dict[str, Any],
        *,
        method: str | None = None,
    ) -> None:
        """Replace both JSON columns (``extract_fields``)."""
        values: dict[str, Any] = {
            "fields": fields,
            "confidence_scores": confidences,
            "updated_at": utc_now(),
        }
        if method:
            values["method"] = method
        self._update(user_id, extraction_id, values)

    def set_document_type(self, user_id: int, extraction_id: int, document_type: str) -> None:
        self._update(
            user_id, extraction_id, {"document_type": document_type, "updated_at": utc_now()}
        )

    def _update(self, user_id: int, extraction_id: int, values: dict[str, Any]) -> None:
        with session_scope(self.engine) as s:
            done = s.execute(
                update(ExtractionRow)
                .where(ExtractionRow.id == extraction_id, ExtractionRow.owner_id == user_id)
                .values(**values)
            )
            if done.rowcount != 1:  # type: ignore[attr-defined]
                raise NotFoundError(f"No extraction {extraction_id}.")

    def update_field(
        self, user_id: int, extraction_id: int, path: str, value: Any, confidence: float
    ) -> None:
        """Set ``value`` at JSON ``path`` and its confidence at the same path."""
        if (
            not isinstance(confidence, int | float)
            or isinstance(confidence, bool)
            or not 0 <= confidence <= 1
        ):
            raise InputError(f"Confidence must be 0.0-1.0, got {confidence}")
        segments = rules.parse_path(path)
        encoded = json.dumps(value)
        with session_scope(self.engine) as s:
            row = self._ext(s, user_id, extraction_id)
            rules.check_path(row.fields, segments, must_exist=False)
            spread = rules.spread_confidence(row.fields, row.confidence_scores, segments)
            if spread is not None:
                row.confidence_scores = spread
                s.flush()
            if self.dialect == "postgresql":
                s.execute(
                    text(
                        "SELECT update_extraction_field(:id, :uid, CAST(:path AS TEXT[]), "
                        "CAST(:value AS JSONB), :conf)"
                    ),
                    {
                        "id": extraction_id,
                        "uid": user_id,
                        "path": [str(p) for p in segments],
                        "value": encoded,
                        "conf": float(confidence),
                    },
                )
            else:
                p = rules.sqlite_json_path(segments)
                s.execute(
                    text(
                        "UPDATE documents_extractions SET fields = json_set(fields, :p, json(:value)), "
                        "confidence_scores = json_set(confidence_scores, :p, :conf), updated_at = :now "
                        "WHERE id = :id AND owner_id = :uid"
                    ),
                    {
                        "p": p,
                        "value": encoded,
                        "conf": float(confidence),
                        "now": utc_now(),
                        "id": extraction_id,
                        "uid": user_id,
                    },
                )

    def remove_field(self, user_id: int, extraction_id: int, path: str) -> None:
        segments = rules.parse_path(path)
        with session_scope(self.engine) as s:
            row = self._ext(s, user_id, extraction_id)
            rules.check_path(row.fields, segments, must_exist=True)
            if self.dialect == "postgresql":
                s.execute(
                    text("SELECT remove_extraction_field(:id, :uid, CAST(:path AS TEXT[]))"),
                    {"id": extraction_id, "uid": user_id, "path": [str(p) for p in segments]},
                )
            else:
                s.execute(
                    text(
                        "UPDATE documents_extractions SET fields = json_remove(fields, :p), "
                        "confidence_scores = json_remove(confidence_scores, :p), updated_at = :now "
                        "WHERE id = :id AND owner_id = :uid"
                    ),
                    {
                        "p": rules.sqlite_json_path(segments),
                        "now": utc_now(),
                        "id": extraction_id,
                        "uid": user_id,
                    },
                )

    def complete(self, user_id: int, extraction_id: int, *, reason: str = "") -> int:
        """``complete_extraction``'s check and write: the number of fields, or CompletionCheck."""
        with session_scope(self.engine) as s:
            row = self._ext(s, user_id, extraction_id)
            if not row.fields:
                raise CompletionCheck("Cannot complete: no fields extracted")
            row.status, row.reason, row.updated_at = "completed", reason, utc_now()
            return len(row.fields)

    def fail(self, user_id: int, extraction_id: int, reason: str) -> None:
        self._update(
            user_id,
            extraction_id,
            {"status": "failed", "reason": reason[:2000], "updated_at": utc_now()},
        )

    def reopen(self, user_id: int, extraction_id: int) -> ExtractionInfo:
        """A correction run works on a completed extraction; it ends completed again."""
        with session_scope(self.engine) as s:
            row = self._ext(s, user_id, extraction_id)
            row.status, row.reason, row.updated_at = "in_progress", "correction", utc_now()
            return extraction_info(row)

    def count_rows(self) -> int:
        """Every extraction row (tests use it to prove nothing was half-written)."""
        with session_scope(self.engine) as s:
            return s.scalar(select(func.count()).select_from(ExtractionRow)) or 0


def extraction_info(row: ExtractionRow) -> ExtractionInfo:
    return ExtractionInfo(
        id=row.id,
        document_id=row.document_id,
        status=row.status,  # type: ignore[arg-type]
        reason=row.reason,
        mode=row.mode,  # type: ignore[arg-type]
        requested_fields=row.requested_fields,
        document_type=row.document_type,
        fields=_json(row.fields),
        confidence_scores=_json(row.confidence_scores),
        method=row.method,
        updated_at=row.updated_at,
    )


def _json(value: Any) -> Any:
    # SQLite's json_set hands back text in a JSON column only if read raw; normalise both.
    return json.loads(value) if isinstance(value, str) else value
