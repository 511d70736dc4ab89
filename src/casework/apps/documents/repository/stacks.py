"""Stacks: named sets of a user's documents and the table extracted across them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    select,
)
from sqlalchemy.orm import Session

from casework.apps.documents.models import (
    StackInfo,
    StackTable,
)
from casework.apps.documents.repository.documents import DocumentStore, utc_now
from casework.apps.documents.tables import (
    DocumentRow,
    StackDocumentRow,
    StackRow,
    StackTableRow,
    StackTableRowRow,
)
from casework.errors import InputError, NotFoundError
from casework.stores.sql import session_scope


class StackStore(DocumentStore):
    """A user's stacks and their tables."""

    def create_stack(self, user_id: int, name: str) -> StackInfo:
        if not name.strip():
            raise InputError("A stack needs a name.")
        with session_scope(self.engine) as s:
            row = StackRow(owner_id=user_id, name=name.strip()[:200], created_at=utc_now())
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
                table.status, table.updated_at = "in_progress", utc_now()  # new documents need rows
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
                stack_id=stack_id, columns=[], status="in_progress", updated_at=utc_now()
            )
            s.add(row)
            s.flush()
        return row

    def define_columns(self, user_id: int, stack_id: int, columns: list[dict[str, Any]]) -> None:
        with session_scope(self.engine) as s:
            table = self._table(s, user_id, stack_id, create=True)
            assert table is not None
            table.columns, table.status, table.updated_at = columns, "in_progress", utc_now()

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
                        updated_at=utc_now(),
                    )
                )
                return True
            row.cells, row.confidences, row.updated_at = cells, confidences, utc_now()
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
            row.updated_at = utc_now()

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
            table.status, table.updated_at = status, utc_now()
