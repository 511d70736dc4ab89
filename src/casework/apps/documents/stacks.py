"""The stacks agent's tools: a set of documents into one table, one row per document.

``create_stack_tools(stack_id, user_id, db)`` binds the seven tools to one stack of one user;
``doc_id`` arguments outside the stack are refused with the same sentence whether the document
is another user's, in another stack, or does not exist. Every row is written as it is
extracted, so a long build is resumable: a new build sees the table state and fills the
documents that still have no row. The agent that calls them is ``agent.build_whole_table``
(and its batched steps); ``service.run_stack_build`` runs the build.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from langchain.tools import tool
from langchain_core.tools import BaseTool

from casework.apps.documents.repository import DocumentsRepository
from casework.errors import CaseworkError, ToolRetry

__all__ = ["COMPLETE_TABLE", "STACK_TOOL_NAMES", "create_stack_tools"]

STACK_TOOL_NAMES = (
    "list_documents",
    "get_document_text",
    "define_columns",
    "extract_row",
    "update_cell",
    "get_table_state",
    "complete_table",
)
COMPLETE_TABLE = "complete_table"
COLUMN_TYPES = ("text", "number", "date", "list")
MAX_COLUMNS = 30
_COLUMN = re.compile(r"[a-z][a-z0-9_]{0,59}")


def _columns_errors(columns: Any) -> list[str]:
    if not isinstance(columns, list) or not columns:
        return ["columns must be a non-empty list of {name, type, description}"]
    if len(columns) > MAX_COLUMNS:
        return [f"at most {MAX_COLUMNS} columns"]
    errors, seen = [], set()
    for i, col in enumerate(columns):
        if not isinstance(col, dict):
            errors.append(f"column {i} must be an object")
            continue
        name, kind = col.get("name"), col.get("type", "text")
        if not isinstance(name, str) or not _COLUMN.fullmatch(name):
            errors.append(f"column {i} name {name!r} must be snake_case (a-z, 0-9, _)")
        elif name in seen:
            errors.append(f"column {name!r} is defined twice")
        seen.add(name)
        if kind not in COLUMN_TYPES:
            errors.append(f"column {name!r} type {kind!r} must be one of {', '.join(COLUMN_TYPES)}")
    return errors


@dataclass(frozen=True)
class _Stack:
    """One stack of one user, as the tools see it (``only``: one document of it)."""

    db: DocumentsRepository
    user_id: int
    stack_id: int
    only: int | None

    def docs(self) -> list[tuple[int, str]]:
        docs = self.db.stack_documents(self.user_id, self.stack_id)
        return [(d, f) for d, f in docs if self.only is None or d == self.only]

    def in_stack(self, doc_id: Any) -> int:
        ids = {d for d, _ in self.docs()}
        if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id not in ids:
            raise ToolRetry(
                f"Document {doc_id} is not in this stack; call list_documents for the ids you can use."
            )
        return doc_id

    def table(self) -> Any:
        return self.db.table_state(self.user_id, self.stack_id)

    def column_names(self) -> list[str]:
        table = self.table()
        if table is None or not table.columns:
            raise ToolRetry("No columns yet; call define_columns first.")
        return [c["name"] for c in table.columns]


def _check_conf(name: str, conf: Any) -> None:
    if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0 <= conf <= 1:
        raise ToolRetry(f"Confidence for '{name}' must be 0.0-1.0, got {conf}")


def _reading_tools(s: _Stack) -> list[BaseTool]:
    @tool
    def list_documents() -> str:
        """List all documents in this stack (doc_id, filename, whether it has a row)."""
        table = s.table()
        done = {r["document_id"] for r in table.rows} if table else set()
        docs = [{"doc_id": d, "filename": f, "has_row": d in done} for d, f in s.docs()]
        return json.dumps(docs)

    @tool
    def get_document_text(doc_id: int) -> str:
        """Read the text of one document of this stack."""
        found = s.db.stack_document_text(s.user_id, s.stack_id, s.in_stack(doc_id))
        if found is None:
            raise ToolRetry("No OCR data found for this document")
        return f"Document {doc_id} ({found[1]} pages):\n\n{found[0]}"

    @tool
    def get_table_state() -> str:
        """The columns, the rows so far and the documents still without a row."""
        table = s.table()
        docs = [d for d, _ in s.docs()]
        if table is None:
            return json.dumps(
                {"columns": [], "rows": [], "missing_rows": docs, "status": "not started"}
            )
        done = {r["document_id"] for r in table.rows}
        return json.dumps(
            {
                "columns": table.columns,
                "rows": [
                    {"doc_id": r["document_id"], "cells": r["cells"]}
                    for r in table.rows
                    if r["document_id"] in docs
                ],
                "missing_rows": [d for d in docs if d not in done],
                "status": table.status,
            },
            ensure_ascii=False,
        )

    return [list_documents, get_document_text, get_table_state]


def _column_tools(s: _Stack) -> list[BaseTool]:
    @tool
    def define_columns(columns: list[dict[str, Any]]) -> str:
        """Define the table's columns from what the documents share: [{name (snake_case), type (text|number|date|list), description}]."""
        if s.only is not None:
            raise ToolRetry(f"The columns are set; write the row of document {s.only} only.")
        errors = _columns_errors(columns)
        if errors:
            raise ToolRetry("Validation failed:\n- " + "\n- ".join(errors))
        clean = [
            {
                "name": c["name"],
                "type": c.get("type", "text"),
                "description": str(c.get("description", ""))[:200],
            }
            for c in columns
        ]
        s.db.define_columns(s.user_id, s.stack_id, clean)
        return f"Defined {len(clean)} columns: {', '.join(c['name'] for c in clean)}"

    @tool
    def complete_table() -> str:
        """Mark the table complete (every document needs its row)."""
        if s.only is not None:
            raise ToolRetry(f"This run writes the row of document {s.only} only; call extract_row.")
        table = s.table()
        if table is None or not table.columns:
            raise ToolRetry("Cannot complete: no columns defined")
        done = {r["document_id"] for r in table.rows}
        missing = [d for d, _ in s.db.stack_documents(s.user_id, s.stack_id) if d not in done]
        if missing:
            raise ToolRetry(
                f"Cannot complete: documents without a row: {', '.join(map(str, missing))}"
            )
        s.db.set_table_status(s.user_id, s.stack_id, "completed")
        return f"Table complete. {len(table.rows)} rows, {len(table.columns)} columns."

    return [define_columns, complete_table]


def _row_tools(s: _Stack) -> list[BaseTool]:
    @tool
    def extract_row(doc_id: int, values: dict[str, Any], confidences: dict[str, Any]) -> str:
        """Write one document's row: column -> value (null if absent) and column -> confidence 0.0-1.0."""
        doc = s.in_stack(doc_id)
        names = s.column_names()
        unknown = [k for k in values if k not in names]
        if unknown:
            raise ToolRetry(
                f"Unknown columns: {', '.join(unknown)}; the columns are: {', '.join(names)}"
            )
        for name in values:
            _check_conf(name, confidences.get(name))
        cells = {n: values.get(n) for n in names}
        confs = {n: float(confidences[n]) if n in values else 0.0 for n in names}
        new = s.db.upsert_row(s.user_id, s.stack_id, doc, cells, confs)
        return f"{'Saved' if new else 'Replaced'} the row of document {doc} ({len(values)} values)"

    @tool
    def update_cell(doc_id: int, column: str, value: Any, confidence: float) -> str:
        """Fix one cell of a document's row."""
        doc = s.in_stack(doc_id)
        if column not in s.column_names():
            raise ToolRetry(
                f"Unknown column '{column}'; the columns are: {', '.join(s.column_names())}"
            )
        _check_conf(column, confidence)
        try:
            s.db.update_cell(s.user_id, s.stack_id, doc, column, value, float(confidence))
        except CaseworkError as exc:
            raise ToolRetry(str(exc)) from None
        return f"Updated document {doc} '{column}' = {json.dumps(value, ensure_ascii=False)} (confidence: {confidence})"

    return [extract_row, update_cell]


def create_stack_tools(
    stack_id: int, user_id: int, db: DocumentsRepository, *, only: int | None = None
) -> list[BaseTool]:
    """The seven tools bound to one stack of one user, in ``STACK_TOOL_NAMES``' order
    (``complete_table`` last). ``only`` narrows them to one document of the stack (a batched
    build's row run): every other ``doc_id`` is refused like one outside the stack, and the
    lists show that document alone."""
    s = _Stack(db, user_id, stack_id, only)
    tools = {t.name: t for t in [*_reading_tools(s), *_column_tools(s), *_row_tools(s)]}
    return [tools[name] for name in STACK_TOOL_NAMES]
