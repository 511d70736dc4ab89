"""A person's decision on a failed extraction, as the side-effect journal keeps it: its key, and
the outcome read back from its entry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from casework.apps.documents.repository import REVIEW_THREAD_PREFIX
from casework.runtime.memory import ExampleDraft
from casework.runtime.review_provider import DecideOutcome


def review_key(extraction_id: int) -> str:
    """The journal key of the decision on a failed extraction."""
    return f"{REVIEW_THREAD_PREFIX}{extraction_id}:review"


def review_outcome(
    result: dict[str, Any], *, applied: bool, example: ExampleDraft | None = None
) -> DecideOutcome:
    """Who decided, when and how, from the journal entry's result; ``applied``: by this call;
    ``example``: the corrected extraction it verified (the inbox stores it in the memory)."""
    return DecideOutcome(
        applied=applied,
        outcome=_outcome(result),
        decided_by=result.get("by", "unknown"),
        decided_at=datetime.fromisoformat(result["at"]),
        example=example,
    )


def _outcome(result: dict[str, Any]) -> str:
    if result.get("action") == "corrected":
        return (
            f"corrected: {len(result.get('fields') or {})} field(s) in extraction "
            f"{result.get('extraction_id')}"
        )
    if result.get("action") == "retry":
        return f"retried as extraction {result.get('extraction_id')}"
    note = result.get("note") or ""
    return "marked reviewed" + (f": {note}" if note else "")
