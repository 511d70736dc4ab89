"""The extraction agent's tools, exactly the spec's seven, bound to one run by closure.

``create_tools(extraction_id, document_id, user_id, db)`` locks every query to that user,
document and extraction: the model sees tools without id parameters and cannot widen them.
Each write goes straight to the database. Errors come back to the model flagged as errors
(``ToolRetry`` -> a ToolMessage with ``status="error"``, the spec's ``is_error``) with the
spec's texts.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.tools import tool
from langchain_core.tools import BaseTool

from casework.apps.documents import rules
from casework.apps.documents.repository import DocumentsRepository
from casework.errors import InputError, ToolRetry

__all__ = ["EXTRACTION_TOOL_NAMES", "create_tools"]

EXTRACTION_TOOL_NAMES = (
    "get_document_text",
    "get_current_extraction",
    "identify_document",
    "extract_fields",
    "update_field",
    "remove_field",
    "complete_extraction",
)


def _fmt(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def create_tools(
    extraction_id: int,
    document_id: int,
    user_id: int,
    db: DocumentsRepository,
    *,
    requested: list[str] | None = None,
) -> list[BaseTool]:
    """The seven tools for one extraction run (custom mode when ``requested`` names fields)."""
    return [
        *_reading_tools(db, user_id, document_id, extraction_id, requested),
        *_writing_tools(db, user_id, extraction_id, requested),
    ]


def _reading_tools(
    db: DocumentsRepository,
    user_id: int,
    document_id: int,
    extraction_id: int,
    requested: list[str] | None,
) -> list[BaseTool]:
    """Read the document and the extraction so far; name the document's type."""

    @tool
    def get_document_text() -> str:
        """Read the document text for extraction"""
        found = db.document_text(user_id, document_id)
        if found is None:
            raise ToolRetry("No OCR data found for this document")
        raw_text, page_count = found
        return f"Document ({page_count} pages):\n\n{raw_text}"

    @tool
    def get_current_extraction() -> str:
        """View the current extraction state"""
        try:
            ext = db.get_extraction(user_id, extraction_id)
        except InputError as exc:
            raise ToolRetry(str(exc)) from None
        state: dict[str, Any] = {
            "extracted_fields": ext.fields,
            "confidence_scores": ext.confidence_scores,
            "status": ext.status,
            "document_type": ext.document_type,
        }
        if requested:
            state["requested_fields"] = requested
        return json.dumps(state, indent=2, ensure_ascii=False)

    @tool
    def identify_document(document_type: str) -> str:
        """Set the document type (e.g. invoice, receipt, form, letter, contract)."""
        kind = " ".join(str(document_type).split()).lower()[:80]
        if not kind:
            raise ToolRetry("document_type is empty; name the type, e.g. 'invoice'.")
        db.set_document_type(user_id, extraction_id, kind)
        return f"Document type set to '{kind}'"

    return [get_document_text, get_current_extraction, identify_document]


def _writing_tools(
    db: DocumentsRepository, user_id: int, extraction_id: int, requested: list[str] | None
) -> list[BaseTool]:
    """Write, update and remove fields; complete the extraction."""

    @tool
    def extract_fields(fields: dict[str, Any], confidences: dict[str, Any]) -> str:
        """Extract fields from the document. Saves directly to database. `fields`: name -> value (numbers for amounts, arrays for lists, nested objects allowed); `confidences`: the same names -> 0.0-1.0."""
        if requested is None:  # custom mode keeps the user's names exactly
            fields, confidences = rules.tidy_extraction_args(fields, confidences)
        errors = rules.validate_extraction(fields, confidences, requested=requested)
        if errors:
            raise ToolRetry("Validation failed:\n- " + "\n- ".join(errors))
        db.set_fields(user_id, extraction_id, fields, confidences)
        return f"Saved {len(fields)} fields to database"

    @tool
    def update_field(path: str, value: Any, confidence: float) -> str:
        """Update a specific field using JSON path (e.g., 'document.title' or 'items[2].price')"""
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not 0 <= confidence <= 1
        ):
            raise ToolRetry(f"Confidence must be 0.0-1.0, got {confidence}")
        try:
            db.update_field(user_id, extraction_id, path, value, float(confidence))
        except InputError as exc:
            raise ToolRetry(str(exc)) from None
        return f"Updated '{path}' = {_fmt(value)} (confidence: {confidence})"

    @tool
    def remove_field(path: str) -> str:
        """Remove a field using JSON path"""
        try:
            db.remove_field(user_id, extraction_id, path)
        except InputError as exc:
            raise ToolRetry(str(exc)) from None
        return f"Removed field at '{path}'"

    @tool
    def complete_extraction() -> str:
        """Mark extraction as complete"""
        try:
            count = db.complete(user_id, extraction_id)
        except InputError as exc:
            raise ToolRetry(str(exc)) from None
        return f"Extraction complete. {count} fields saved."

    return [extract_fields, update_field, remove_field, complete_extraction]
