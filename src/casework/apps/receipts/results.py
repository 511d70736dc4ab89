"""What the service answers: an import's report, a receipt with its labels, a word's history,
a validation (and its JSON), an entry of the review queue. Values only, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from casework.apps.receipts.models import (
    Label,
    LabelDecision,
    Receipt,
    Word,
    WordRef,
)


@dataclass
class ImportReport:
    added: list[Receipt] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    indexed_words: int = 0
    vector_error: str | None = None
    unknown_labels: dict[str, list[str]] = field(default_factory=dict)
    """Per file, the labels it uses that the taxonomy does not define (kept as given: no
    strategy checks them)."""

    @property
    def words(self) -> int:
        return sum(r.word_count for r in self.added)


@dataclass(frozen=True)
class ReceiptView:
    receipt: Receipt
    words: list[Word]
    labels: dict[int, list[str]]
    """Each word's current labels by word pk, a label not VALID marked ``?STATUS``."""


@dataclass(frozen=True)
class WordHistory:
    receipt: Receipt
    word: Word
    labels: list[Label]
    """Every label row of the word, oldest first (current and superseded)."""


def decision_json(ref: WordRef, result: LabelDecision) -> dict[str, Any]:
    """The decision with the word it is about and how it was reached (CLI, API, web)."""
    run = result.run
    usage = run.usage if run is not None else None
    return {
        "receipt": ref.receipt_key,
        "line_id": ref.line_id,
        "word_id": ref.word_id,
        "word_text": ref.word_text,
        "suggested_label": ref.suggested_label,
        **result.model_dump(mode="json"),
        "strategy": run.strategy if run is not None else None,
        "decided_by": run.decided_by if run is not None else None,
        "model": run.model if run is not None else None,
        "ended_by": run.ended_by.value if run is not None else None,
        "tool_calls": run.tool_names if run is not None else [],
        "seconds": round(usage.wall_seconds, 3) if usage is not None else None,
        "input_tokens": usage.input_tokens if usage is not None else 0,
        "output_tokens": usage.output_tokens if usage is not None else 0,
    }


@dataclass(frozen=True)
class Validation:
    ref: WordRef
    result: LabelDecision
    recorded: list[Label] = field(default_factory=list)
    """The label rows the decision was recorded as (none unless asked to record)."""

    def to_json(self) -> dict[str, Any]:
        return decision_json(self.ref, self.result)


@dataclass(frozen=True)
class ReviewEntry:
    label: Label
    receipt: str
    """The receipt's slug."""
    instead_of: str | None
    """The label type the suggestion would replace, if it is a relabel."""
