"""Queries of the documents app, every one scoped by the caller's user id.

Documents are private (``owner_id`` is never null), so reads and writes both filter on
``owner_id == user_id``: another user's document, extraction or stack is indistinguishable from
one that does not exist (the same ``NotFoundError`` sentence). JSON-path edits run as the spec's
SQL functions on PostgreSQL and with SQLite's JSON functions on SQLite; both are preceded by
the same path checks, so the two databases behave alike.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Engine,
    String,
    cast,
    column,
    exists,
    func,
    literal,
    select,
    table,
    text,
    update,
)
from sqlalchemy.orm import Session

from casework.apps.documents import rules
from casework.apps.documents.models import (
    DocumentInfo,
    ExtractionInfo,
    FailedExtraction,
    StackInfo,
    StackTable,
)
from casework.apps.documents.ocr import ReadResult
from casework.apps.documents.tables import (
    DocumentRow,
    ExtractionRow,
    OcrResultRow,
    RunEventRow,
    RunRow,
    StackDocumentRow,
    StackRow,
    StackTableRow,
    StackTableRowRow,
)
from casework.errors import InputError, NotFoundError
from casework.runtime.decision import ToolCallRecord
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before
from casework.stores.sql import session_scope

__all__ = ["REVIEW_ACTION", "REVIEW_THREAD_PREFIX", "CompletionCheck", "DocumentsRepository"]

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


def _now() -> datetime:
    return datetime.now(UTC)


class CompletionCheck(InputError):
    """``complete_extraction``'s refusal ("Cannot complete: no fields extracted")."""


class DocumentsRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    # ------------------------------------------------------------------ documents
    def add_document(
        self, user_id: int, *, filename: str, data: bytes, read: ReadResult
    ) -> DocumentInfo:
        """The document and its OCR result in one transaction: both or neither."""
        with session_scope(self.engine) as s:
            doc = DocumentRow(
                owner_id=user_id,
                filename=filename[:300],
                media_type=read.media_type,
                size_bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
                created_at=_now(),
            )
            s.add(doc)
            s.flush()
            s.add(
                OcrResultRow(
                    owner_id=user_id,
                    document_id=doc.id,
                    raw_text=read.raw_text,
                    page_count=len(read.pages),
                    pages=[p.text for p in read.pages],
                    engine=read.engine,
                    ocr_pages=read.ocr_pages,
                    seconds=round(read.seconds, 3),
                    created_at=doc.created_at,
                )
            )
            s.flush()
            return self._doc_info(s, doc)

    def _doc_info(self, s: Session, doc: DocumentRow) -> DocumentInfo:
        ocr = s.scalars(select(OcrResultRow).where(OcrResultRow.document_id == doc.id)).one()
        return DocumentInfo(
            id=doc.id,
            filename=doc.filename,
            media_type=doc.media_type,
            size_bytes=doc.size_bytes,
            page_count=ocr.page_count,
            engine=ocr.engine,
            ocr_pages=ocr.ocr_pages,
            read_seconds=ocr.seconds,
            created_at=doc.created_at,
        )

    def _doc(self, s: Session, user_id: int, document_id: int) -> DocumentRow:
        row = s.scalars(
            select(DocumentRow).where(
                DocumentRow.id == document_id, DocumentRow.owner_id == user_id
            )
        ).one_or_none()
        if row is None:
            raise NotFoundError(
                f"No document {document_id}; list yours with `casework documents list`."
            )
        return row

    def get_document(self, user_id: int, document_id: int) -> DocumentInfo:
        with session_scope(self.engine) as s:
            return self._doc_info(s, self._doc(s, user_id, document_id))

    def list_documents(self, user_id: int) -> list[DocumentInfo]:
        with session_scope(self.engine) as s:
            rows = s.scalars(
                select(DocumentRow).where(DocumentRow.owner_id == user_id).order_by(DocumentRow.id)
            ).all()
            return [self._doc_info(s, r) for r in rows]

    def document_text(self, user_id: int, document_id: int) -> tuple[str, int] | None:
        """(raw text, page count) of the user's document, or None when there is none."""
        with session_scope(self.engine) as s:
            row = s.execute(
                select(OcrResultRow.raw_text, OcrResultRow.page_count).where(
                    OcrResultRow.document_id == document_id, OcrResultRow.owner_id == user_id
                )
            ).one_or_none()
            return (row[0], row[1]) if row else None

    # ------------------------------------------------------------------ extractions
    def create_extraction(
        self, user_id: int, document_id: int, *, requested: list[str] | None = None
    ) -> ExtractionInfo:
        """The ``in_progress`` row the agent writes into (made before the agent starts)."""
        with session_scope(self.engine) as s:
            self._doc(s, user_id, document_id)
            now = _now()
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
            return _extraction(row)

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
            return _extraction(self._ext(s, user_id, extraction_id))

    def extractions_of(self, user_id: int, document_id: int) -> list[ExtractionInfo]:
        with session_scope(self.engine) as s:
            self._doc(s, user_id, document_id)
            rows = s.scalars(
                select(ExtractionRow)
                .where(ExtractionRow.document_id == document_id, ExtractionRow.owner_id == user_id)
                .order_by(ExtractionRow.id)
            ).all()
            return [_extraction(r) for r in rows]

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
            "updated_at": _now(),
        }
        if method:
            values["method"] = method
        self._update(user_id, extraction_id, values)

    def set_document_type(self, user_id: int, extraction_id: int, document_type: str) -> None:
        self._update(user_id, extraction_id, {"document_type": document_type, "updated_at": _now()})

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
                        "now": _now(),
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
                        "now": _now(),
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
            row.status, row.reason, row.updated_at = "completed", reason, _now()
            return len(row.fields)

    def fail(self, user_id: int, extraction_id: int, reason: str) -> None:
        self._update(
            user_id,
            extraction_id,
            {"status": "failed", "reason": reason[:2000], "updated_at": _now()},
        )

    def reopen(self, user_id: int, extraction_id: int) -> ExtractionInfo:
        """A correction run works on a completed extraction; it ends completed again."""
        with session_scope(self.engine) as s:
            row = self._ext(s, user_id, extraction_id)
            row.status, row.reason, row.updated_at = "in_progress", "correction", _now()
            return _extraction(row)

    # ------------------------------------------------------------------ runs and events
    def create_run(
        self,
        user_id: int,
        run_id: str,
        kind: str,
        *,
        extraction_id: int | None = None,
        stack_id: int | None = None,
    ) -> None:
        with session_scope(self.engine) as s:
            s.add(
                RunRow(
                    id=run_id,
                    owner_id=user_id,
                    kind=kind,
                    extraction_id=extraction_id,
                    stack_id=stack_id,
                    status="running",
                    created_at=_now(),
                )
            )

    def append_event(self, run_id: str, seq: int, data: dict[str, Any]) -> None:
        with session_scope(self.engine) as s:
            s.add(RunEventRow(run_id=run_id, seq=seq, data=data))

    def finish_run(self, run_id: str, cost_usd: float) -> None:
        with session_scope(self.engine) as s:
            s.execute(
                update(RunRow)
                .where(RunRow.id == run_id)
                .values(status="done", cost_usd=cost_usd, finished_at=_now())
            )

    def stale_runs(self, older_than: datetime) -> list[tuple[str, int, int | None, int]]:
        """Runs still ``running`` whose last sign of life is before ``older_than``: their
        process ended (killed, crashed). (run id, owner, extraction id, last event seq)."""
        with session_scope(self.engine) as s:
            rows = s.execute(
                select(RunRow.id, RunRow.owner_id, RunRow.extraction_id, RunRow.created_at).where(
                    RunRow.status == "running", RunRow.created_at < older_than
                )
            ).all()
            out = []
            for run_id, owner, ext_id, _created in rows:
                last = s.scalar(
                    select(func.max(RunEventRow.seq)).where(RunEventRow.run_id == run_id)
                )
                out.append((run_id, owner or 0, ext_id, last or 0))
            return out

    def stale_extractions(self, older_than: datetime) -> list[tuple[int, int]]:
        """(owner, extraction id) of extractions ``in_progress`` untouched since ``older_than``."""
        with session_scope(self.engine) as s:
            rows = s.execute(
                select(ExtractionRow.owner_id, ExtractionRow.id).where(
                    ExtractionRow.status == "in_progress", ExtractionRow.updated_at < older_than
                )
            ).all()
            return [(r[0] or 0, r[1]) for r in rows]

    def get_run(self, user_id: int, run_id: str) -> dict[str, Any]:
        with session_scope(self.engine) as s:
            row = s.scalars(
                select(RunRow).where(RunRow.id == run_id, RunRow.owner_id == user_id)
            ).one_or_none()
            if row is None:
                raise NotFoundError(f"No run {run_id!r}; runs are named when an extraction starts.")
            return {
                "id": row.id,
                "kind": row.kind,
                "extraction_id": row.extraction_id,
                "stack_id": row.stack_id,
                "status": row.status,
                "cost_usd": row.cost_usd,
            }

    def events_after(
        self, user_id: int, run_id: str, after: int
    ) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
        """(events with seq > after, whether the run is done), scoped to the user's run."""
        with session_scope(self.engine) as s:
            status = s.scalar(
                select(RunRow.status).where(RunRow.id == run_id, RunRow.owner_id == user_id)
            )
            if status is None:
                raise NotFoundError(f"No run {run_id!r}; runs are named when an extraction starts.")
            rows = s.execute(
                select(RunEventRow.seq, RunEventRow.data)
                .where(RunEventRow.run_id == run_id, RunEventRow.seq > after)
                .order_by(RunEventRow.seq)
            ).all()
            return [(r[0], r[1]) for r in rows], status == "done"

    # ------------------------------------------------------------------ stacks
    def create_stack(self, user_id: int, name: str) -> StackInfo:
        if not name.strip():
            raise InputError("A stack needs a name.")
        with session_scope(self.engine) as s:
            row = StackRow(owner_id=user_id, name=name.strip()[:200], created_at=_now())
            s.add(row)
            s.flush()
            return StackInfo(id=row.id, name=row.name, document_ids=[], table=None)

    def _stack(self, s: Session, user_id: int, stack_id: int) -> StackRow:
        row = s.scalars(
            select(StackRow).where(StackRow.id == stack_id, StackRow.owner_id == user_id)
        ).one_or_none()
        if row is None:
            raise NotFoundError(
                f"No stack {stack_id}; create one with `casework documents stack create NAME`."
            )
        return row

    def add_to_stack(self, user_id: int, stack_id: int, document_ids: list[int]) -> StackInfo:
        """All or nothing: one unknown document id adds none."""
        with session_scope(self.engine) as s:
            self._stack(s, user_id, stack_id)
            have = set(
                s.scalars(
                    select(StackDocumentRow.document_id).where(
                        StackDocumentRow.stack_id == stack_id
                    )
                )
            )
            added = False
            for doc_id in document_ids:
                self._doc(s, user_id, doc_id)
                if doc_id not in have:
                    s.add(StackDocumentRow(stack_id=stack_id, document_id=doc_id))
                    have.add(doc_id)
                    added = True
            table = s.scalars(
                select(StackTableRow).where(StackTableRow.stack_id == stack_id)
            ).one_or_none()
            if added and table is not None and table.status == "completed":
                table.status, table.updated_at = "in_progress", _now()  # new documents need rows
        return self.get_stack(user_id, stack_id)

    def stack_documents(self, user_id: int, stack_id: int) -> list[tuple[int, str]]:
        with session_scope(self.engine) as s:
            self._stack(s, user_id, stack_id)
            rows = s.execute(
                select(DocumentRow.id, DocumentRow.filename)
                .join(StackDocumentRow, StackDocumentRow.document_id == DocumentRow.id)
                .where(StackDocumentRow.stack_id == stack_id, DocumentRow.owner_id == user_id)
                .order_by(DocumentRow.id)
            ).all()
            return [(r[0], r[1]) for r in rows]

    def stack_document_text(
        self, user_id: int, stack_id: int, document_id: int
    ) -> tuple[str, int] | None:
        """Text of a document only if it is in this stack (and the user's)."""
        if document_id not in {d for d, _ in self.stack_documents(user_id, stack_id)}:
            return None
        return self.document_text(user_id, document_id)

    def get_stack(self, user_id: int, stack_id: int) -> StackInfo:
        with session_scope(self.engine) as s:
            stack = self._stack(s, user_id, stack_id)
            name = stack.name
        docs = self.stack_documents(user_id, stack_id)
        return StackInfo(
            id=stack_id,
            name=name,
            document_ids=[d for d, _ in docs],
            table=self.table_state(user_id, stack_id),
        )

    def list_stacks(self, user_id: int) -> list[StackInfo]:
        with session_scope(self.engine) as s:
            ids = list(
                s.scalars(
                    select(StackRow.id).where(StackRow.owner_id == user_id).order_by(StackRow.id)
                )
            )
        return [self.get_stack(user_id, i) for i in ids]

    def _table(
        self, s: Session, user_id: int, stack_id: int, *, create: bool = False
    ) -> StackTableRow | None:
        self._stack(s, user_id, stack_id)
        row = s.scalars(
            select(StackTableRow).where(StackTableRow.stack_id == stack_id)
        ).one_or_none()
        if row is None and create:
            row = StackTableRow(
                stack_id=stack_id, columns=[], status="in_progress", updated_at=_now()
            )
            s.add(row)
            s.flush()
        return row

    def define_columns(self, user_id: int, stack_id: int, columns: list[dict[str, Any]]) -> None:
        with session_scope(self.engine) as s:
            table = self._table(s, user_id, stack_id, create=True)
            assert table is not None
            table.columns, table.status, table.updated_at = columns, "in_progress", _now()

    def upsert_row(
        self,
        user_id: int,
        stack_id: int,
        document_id: int,
        cells: dict[str, Any],
        confidences: dict[str, Any],
    ) -> bool:
        """One row per document: a second extract_row replaces it. True when it was new."""
        with session_scope(self.engine) as s:
            table = self._table(s, user_id, stack_id)
            if table is None:
                raise InputError("Define the columns first.")
            row = s.scalars(
                select(StackTableRowRow).where(
                    StackTableRowRow.table_id == table.id,
                    StackTableRowRow.document_id == document_id,
                )
            ).one_or_none()
            if row is None:
                s.add(
                    StackTableRowRow(
                        table_id=table.id,
                        document_id=document_id,
                        cells=cells,
                        confidences=confidences,
                        updated_at=_now(),
                    )
                )
                return True
            row.cells, row.confidences, row.updated_at = cells, confidences, _now()
            return False

    def update_cell(
        self,
        user_id: int,
        stack_id: int,
        document_id: int,
        column: str,
        value: Any,
        confidence: float,
    ) -> None:
        with session_scope(self.engine) as s:
            table = self._table(s, user_id, stack_id)
            row = (
                None
                if table is None
                else s.scalars(
                    select(StackTableRowRow).where(
                        StackTableRowRow.table_id == table.id,
                        StackTableRowRow.document_id == document_id,
                    )
                ).one_or_none()
            )
            if row is None:
                raise InputError(f"Document {document_id} has no row yet; call extract_row first.")
            row.cells = {**row.cells, column: value}
            row.confidences = {**row.confidences, column: confidence}
            row.updated_at = _now()

    def table_state(self, user_id: int, stack_id: int) -> StackTable | None:
        with session_scope(self.engine) as s:
            table = self._table(s, user_id, stack_id)
            if table is None:
                return None
            rows = s.execute(
                select(StackTableRowRow, DocumentRow.filename)
                .join(DocumentRow, DocumentRow.id == StackTableRowRow.document_id)
                .where(StackTableRowRow.table_id == table.id)
                .order_by(StackTableRowRow.document_id)
            ).all()
            return StackTable(
                columns=list(table.columns),
                status=table.status,
                rows=[
                    {
                        "document_id": r.document_id,
                        "filename": fn,
                        "cells": dict(r.cells),
                        "confidences": dict(r.confidences),
                    }
                    for r, fn in rows
                ],
            )

    def set_table_status(self, user_id: int, stack_id: int, status: str) -> None:
        with session_scope(self.engine) as s:
            table = self._table(s, user_id, stack_id)
            if table is None:
                raise InputError("Define the columns first.")
            table.status, table.updated_at = status, _now()

    # ------------------------------------------------------------------ failed extractions
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
                FailedExtraction(_extraction(ext), ext.owner_id or 0, filename, media_type)
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
            return FailedExtraction(_extraction(ext), ext.owner_id or 0, filename, media_type)

    def user_name(self, user_id: int) -> str | None:
        """A user's name (the platform's users table), for a run made on their behalf."""
        with session_scope(self.engine) as s:
            name = s.scalar(text("SELECT name FROM users WHERE id = :id"), {"id": user_id})
            return str(name) if name is not None else None

    def extraction_tool_calls(self, user_id: int, extraction_id: int) -> list[ToolCallRecord]:
        """The tool calls of the runs that wrote an extraction, from their recorded events
        (the spec's flat events carry a call's input, not its output)."""
        q = (
            select(RunEventRow.run_id, RunEventRow.seq, RunEventRow.data)
            .join(RunRow, RunRow.id == RunEventRow.run_id)
            .where(RunRow.extraction_id == extraction_id, RunRow.owner_id == user_id)
            .order_by(RunRow.created_at, RunEventRow.seq)
        )
        with session_scope(self.engine) as s:
            rows = s.execute(q).all()
        return [
            ToolCallRecord(
                name=str(data["tool"]),
                args=data["input"]
                if isinstance(data.get("input"), dict)
                else {"input": data.get("input")},
                id=f"{run_id}:{seq}",
            )
            for run_id, seq, data in rows
            if isinstance(data, dict) and "tool" in data
        ]

    def count_rows(self) -> int:
        """Every extraction row (tests use it to prove nothing was half-written)."""
        with session_scope(self.engine) as s:
            return s.scalar(select(func.count()).select_from(ExtractionRow)) or 0


def _extraction(row: ExtractionRow) -> ExtractionInfo:
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
