"""documents: an extraction agent whose tools write the database, and stacks into tables.

Documents (PDF text layers, scanned pages and images through OCR) are read into
``ocr_results``; the extraction agent reads the text by tool and writes fields, confidences
and the document type straight into its ``in_progress`` extraction row, edits them by JSON
path, and completes it (or the runtime completes or fails it with a reason). A stacks agent
turns a set of documents into one table, a row per document. Everything is scoped to the
calling user; runs stream flat events that a client can re-attach to.
"""

from __future__ import annotations

from pathlib import Path

from casework.registry import AppSpec, lazy_attr, lazy_call

__all__ = ["APP"]


APP = AppSpec(
    name="documents",
    description="Extract fields from PDFs and images with an agent whose tools write the database.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=lazy_attr("casework.apps.documents.cli:app"),
    router=lazy_call("casework.apps.documents.api:router"),
    demo=lazy_call("casework.apps.documents.demo:run_demo"),
    review=lazy_call("casework.apps.documents.review:DocumentsReview"),
    eval_suite=lazy_call("casework.apps.documents.evalsuite:eval_suite"),
    service="casework.apps.documents.service",
    strategies=lazy_attr("casework.apps.documents.strategies:STRATEGIES"),
    examples=lazy_attr("casework.apps.documents.examples:EXAMPLES"),
)
