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
from typing import Any

from casework.registry import AppSpec

__all__ = ["APP"]


def _cli() -> Any:
    from casework.apps.documents.cli import app

    return app


def _router(settings: Any) -> Any:
    from casework.apps.documents.api import router

    return router(settings)


def _review(settings: Any) -> Any:
    from casework.apps.documents.review import DocumentsReview

    return DocumentsReview(settings)


def _strategies() -> Any:
    from casework.apps.documents.strategies import STRATEGIES

    return STRATEGIES


def _eval_suite() -> Any:
    from casework.apps.documents.evalsuite import eval_suite

    return eval_suite()


def _demo() -> None:
    from casework.apps.documents.demo import run_demo

    run_demo()


APP = AppSpec(
    name="documents",
    description="Extract fields from PDFs and images with an agent whose tools write the database.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=_cli,
    router=_router,
    demo=_demo,
    review=_review,
    eval_suite=_eval_suite,
    strategies=_strategies,
)
