"""Stored schemas (save, fetch by name, the newest as default) and the answers waiting for a
person (keep one, list, open, settle once)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, func, select, update

from casework.apps.sql.models import REVIEW_DECIDED, REVIEW_WAITING, DatabaseSchema, StoredAnswer
from casework.apps.sql.schemas import parse_schema_document
from casework.apps.sql.tables import AnswerRow, SchemaRow
from casework.errors import NotFoundError
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before
from casework.stores.sql import as_utc, session_scope

__all__ = [
    "AnswerRepository",
    "SchemaRepository",
    "StoredSchema",
]


@dataclass(frozen=True)
class StoredSchema:
    """A schema with the database URL it was loaded for."""

    schema: DatabaseSchema
    db_url: str | None
    loaded_at: datetime


class SchemaRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, schema: DatabaseSchema, *, db_url: str | None = None) -> None:
        """Insert or replace the schema of that name; keeps its db_url unless a new one is given."""
        with session_scope(self.engine) as s:
            row = s.get(SchemaRow, schema.name)
            if row is None:
                row = SchemaRow(name=schema.name)
                s.add(row)
            row.source = schema.source
            row.document = json.dumps(schema.to_document())
            row.db_url = db_url or row.db_url
            row.loaded_at = datetime.now(UTC)

    def get(self, name: str | None = None) -> StoredSchema:
        """The named schema, or the newest one when ``name`` is None."""
        with session_scope(self.engine) as s:
            if name is None:
                row = s.scalars(select(SchemaRow).order_by(SchemaRow.loaded_at.desc())).first()
                if row is None:
                    raise NotFoundError(
                        "No schema is loaded; run `casework sql schema load FILE` or "
                        "`casework sql db create --schema FILE`."
                    )
            else:
                row = s.get(SchemaRow, name)
                if row is None:
                    known = ", ".join(self.names()) or "none"
                    raise NotFoundError(f"No schema named {name!r}; loaded schemas: {known}.")
            document = json.loads(row.document)
            tables = parse_schema_document(document, origin=row.name, quoted=True)
            schema = DatabaseSchema(name=row.name, tables=tables, source=row.source)
            return StoredSchema(schema, row.db_url, row.loaded_at)

    def names(self) -> list[str]:
        with session_scope(self.engine) as s:
            return list(s.scalars(select(SchemaRow.name).order_by(SchemaRow.name)))


def _stored(row: AnswerRow) -> StoredAnswer:
    return StoredAnswer(
        id=row.id,
        question=row.question,
        schema_name=row.schema_name,
        query=row.query,
        verdict=row.verdict,
        response=row.response,
        asked_by=row.asked_by,
        created_at=as_utc(row.created_at) or row.created_at,
        review_status=row.review_status,
        review_outcome=row.review_outcome,
        corrected_query=row.corrected_query,
        decided_by=row.decided_by,
        decided_at=as_utc(row.decided_at),
        review_note=row.review_note,
    )


class AnswerRepository:
    """Answers nobody was sure of: kept waiting, listed newest first, settled once."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def keep(
        self,
        *,
        question: str,
        schema_name: str,
        query: str | None,
        verdict: str,
        response: dict[str, Any],
        asked_by: str | None,
    ) -> int:
        with session_scope(self.engine) as s:
            row = AnswerRow(
                question=question,
                schema_name=schema_name,
                query=query,
                verdict=verdict,
                response=response,
                asked_by=asked_by,
                created_at=datetime.now(UTC),
                review_status=REVIEW_WAITING,
            )
            s.add(row)
            s.flush()
            return row.id

    def _where(self, status: str, filters: ReviewFilters) -> list[Any]:
        return [AnswerRow.review_status == status, *age_window(AnswerRow.created_at, filters)]

    def review_rows(
        self, status: str, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[StoredAnswer]:
        where = self._where(status, filters)
        where += keyset_before(AnswerRow.created_at, AnswerRow.id, before)
        with session_scope(self.engine) as s:
            rows = s.scalars(
                select(AnswerRow)
                .where(*where)
                .order_by(AnswerRow.created_at.desc(), AnswerRow.id.desc())
                .limit(limit)
            ).all()
            return [_stored(r) for r in rows]

    def count_review(self, status: str, filters: ReviewFilters) -> int:
        with session_scope(self.engine) as s:
            found = s.scalar(select(func.count(AnswerRow.id)).where(*self._where(status, filters)))
            return int(found or 0)

    def answer(self, answer_id: int) -> StoredAnswer | None:
        with session_scope(self.engine) as s:
            row = s.get(AnswerRow, answer_id)
            return None if row is None else _stored(row)

    def settle_review(
        self,
        answer_id: int,
        *,
        outcome: str,
        corrected: str | None,
        decided_by: str,
        note: str,
    ) -> bool:
        """Settle a waiting answer once: False when it was not waiting (decided first)."""
        with session_scope(self.engine) as s:
            done = s.execute(
                update(AnswerRow)
                .where(AnswerRow.id == answer_id, AnswerRow.review_status == REVIEW_WAITING)
                .values(
                    review_status=REVIEW_DECIDED,
                    review_outcome=outcome,
                    corrected_query=corrected,
                    decided_by=decided_by,
                    decided_at=datetime.now(UTC),
                    review_note=note or None,
                )
            )
            return bool(getattr(done, "rowcount", 0))
