"""receipts: validate a suggested label for one word of a receipt, with evidence.

A ReAct agent gathers evidence through six tools (word context, merchant metadata, similar
words, the word's label history, the receipt's labels, known invalid patterns), submits a
VALID / INVALID / NEEDS_REVIEW decision with a confidence, and the decision policy keeps
VALID / INVALID for confidence above 80. A similarity baseline, a batch harmoniser that
applies fixes with an audit trail, a CLI, API routes and an evaluation suite sit around it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casework.registry import AppSpec

__all__ = ["APP"]


def _cli() -> Any:
    from casework.apps.receipts.cli import app

    return app


def _router(settings: Any) -> Any:
    from casework.apps.receipts.api import router

    return router(settings)


def _demo() -> None:
    from casework.apps.receipts.demo import run_demo

    run_demo()


def _strategies() -> Any:
    from casework.apps.receipts.strategies import STRATEGIES

    return STRATEGIES


def _review(settings: Any) -> Any:
    from casework.apps.receipts.review import ReceiptsReview

    return ReceiptsReview(settings)


def _eval_suite() -> Any:
    from casework.apps.receipts.evalsuite import eval_suite

    return eval_suite()


APP = AppSpec(
    name="receipts",
    description="Validate suggested labels of receipt words with an evidence-gathering agent.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=_cli,
    router=_router,
    demo=_demo,
    eval_suite=_eval_suite,
    strategies=_strategies,
    review=_review,
)
