"""receipts: validate a suggested label for one word of a receipt, with evidence.

A ReAct agent gathers evidence through six tools (word context, merchant metadata, similar
words, the word's label history, the receipt's labels, known invalid patterns), submits a
VALID / INVALID / NEEDS_REVIEW decision with a confidence, and the decision policy keeps
VALID / INVALID for confidence above 80. A similarity baseline, a batch harmoniser that
applies fixes with an audit trail, a CLI, API routes and an evaluation suite sit around it.
"""

from __future__ import annotations

from pathlib import Path

from casework.registry import AppSpec, lazy_attr, lazy_call

__all__ = ["APP"]


APP = AppSpec(
    name="receipts",
    description="Validate suggested labels of receipt words with an evidence-gathering agent.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=lazy_attr("casework.apps.receipts.cli:app"),
    router=lazy_call("casework.apps.receipts.api:router"),
    demo=lazy_call("casework.apps.receipts.demo:run_demo"),
    eval_suite=lazy_call("casework.apps.receipts.evalsuite:eval_suite"),
    service="casework.apps.receipts.service",
    strategies=lazy_attr("casework.apps.receipts.strategies:STRATEGIES"),
    review=lazy_call("casework.apps.receipts.review:ReceiptsReview"),
    examples=lazy_attr("casework.apps.receipts.memory:EXAMPLES"),
)
