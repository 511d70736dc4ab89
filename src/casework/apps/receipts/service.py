"""What the CLI, the API, the evaluation and the demo call: import, seed, index, resolve a
word, record a decision, review. The strategies themselves are in ``strategies``.

Thin orchestration over the repository, vectors, agent and baseline; no prompts, no SQL.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.importer import parse_file
from casework.apps.receipts.models import (
    LABEL_DEFINITIONS,
    Label,
    LabelDecision,
    Receipt,
    ValidationStatus,
    WordRef,
)
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.vectors import (
    VectorsUnavailable,
    index_receipts,
    indexed_ids,
    refresh_words,
    word_doc_id,
)
from casework.errors import InputError, NotFoundError

__all__ = [
    "ImportReport",
    "bundled_receipt_files",
    "check_label",
    "ensure_indexed",
    "import_files",
    "record_result",
    "resolve_ref",
    "review_decide",
    "seed",
]


@dataclass
class ImportReport:
    added: list[Receipt] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    indexed_words: int = 0
    vector_error: str | None = None

    @property
    def words(self) -> int:
        return sum(r.word_count for r in self.added)


def bundled_receipt_files() -> list[Path]:
    folder = files("casework.apps.receipts").joinpath("data").joinpath("receipts")
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".labels.json"))


def import_files(
    deps: ReceiptsDeps,
    paths: Sequence[Path],
    *,
    status: ValidationStatus = ValidationStatus.VALID,
    index: bool = True,
) -> ImportReport:
    """Parse every file first (a bad one aborts before anything is written), write them all
    in one transaction, then embed the new words (idempotent upserts, after the commit)."""
    if not paths:
        raise InputError("Name at least one receipt file to import.")
    parsed = [rec for path in paths for rec in parse_file(Path(path))]
    added, skipped = deps.repo.add_receipts(parsed, status=status)
    report = ImportReport(added=added, skipped=skipped)
    if index:
        try:
            report.indexed_words = (
                index_receipts(deps.repo, deps.vectors, added) if deps.vectors is not None else 0
            )
            if deps.vectors is None:
                report.vector_error = deps.vectors_error or "no vector store"
        except VectorsUnavailable as exc:
            report.vector_error = str(exc)
    return report


def ensure_indexed(deps: ReceiptsDeps, receipts: Sequence[Receipt] | None = None) -> int:
    """Index receipts whose words are missing from the vector store; returns words indexed."""
    if deps.vectors is None:
        raise VectorsUnavailable(deps.vectors_error or "no vector store")
    receipts = list(receipts) if receipts is not None else deps.repo.list_receipts()
    missing = []
    for r in receipts:
        words = deps.repo.words(r.id)
        ids = [word_doc_id(r.image_id, r.receipt_id, w.line_id, w.word_id) for w in words]
        if len(indexed_ids(deps.vectors, ids)) < len(ids):
            missing.append(r)
    return index_receipts(deps.repo, deps.vectors, missing) if missing else 0


def seed(deps: ReceiptsDeps, *, index: bool = True) -> ImportReport:
    """Import the bundled receipts (idempotent) and make sure every receipt is indexed."""
    report = import_files(deps, bundled_receipt_files(), index=False)
    if index:
        try:
            report.indexed_words = ensure_indexed(deps)
        except VectorsUnavailable as exc:
            report.vector_error = str(exc)
    return report


# ---------------------------------------------------------------------- words and labels
def check_label(deps: ReceiptsDeps, label: str) -> str:
    label = label.strip().upper()
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", label):
        raise InputError(f"Label {label!r} is not an upper-case label name such as GRAND_TOTAL.")
    if label not in LABEL_DEFINITIONS and label not in deps.repo.known_label_types():
        known = ", ".join(sorted(LABEL_DEFINITIONS))
        raise InputError(f"Unknown label {label}; known labels: {known}.")
    return label


def resolve_ref(
    deps: ReceiptsDeps,
    receipt: str,
    line_id: int,
    word_id: int,
    label: str,
    *,
    reason: str = "",
    blind: bool = False,
) -> WordRef:
    """The run context for validating ``label`` on one word (raises NotFound/InputError)."""
    r = deps.repo.resolve_receipt(receipt)
    word = deps.repo.get_word(r.id, int(line_id), int(word_id))
    return WordRef(
        image_id=r.image_id,
        receipt_id=r.receipt_id,
        line_id=word.line_id,
        word_id=word.word_id,
        suggested_label=check_label(deps, label),
        word_text=word.text,
        merchant_name=r.merchant_name,
        original_reasoning=reason,
        blind=blind,
    )


# ---------------------------------------------------------------------- recording and review
def _current_label(deps: ReceiptsDeps, word_pk: int, label_type: str) -> Label | None:
    current = [
        lab
        for lab in deps.repo.labels_for_word(word_pk)
        if lab.current and lab.label_type == label_type
    ]
    return current[-1] if current else None


def _refresh(deps: ReceiptsDeps, receipt_pk: int, word_pks: set[int]) -> None:
    if deps.vectors is None:
        return
    # The labels are committed; stale vector metadata is repaired by `receipts index --all`.
    with contextlib.suppress(Exception):
        refresh_words(deps.repo, deps.vectors, deps.repo.get_receipt(receipt_pk), word_pks)


def record_result(
    deps: ReceiptsDeps, ref: WordRef, result: LabelDecision, *, proposed_by: str = "cli"
) -> list[Label]:
    """Append the validation as a label row (the audit trail). A decision on a label the word
    already has supersedes that label; otherwise it is a new label proposed by ``proposed_by``."""
    r = deps.repo.get_receipt_by_key(ref.image_id, ref.receipt_id)
    word = deps.repo.get_word(r.id, ref.line_id, ref.word_id)
    existing = _current_label(deps, word.id, ref.suggested_label)
    run = result.run
    strategy = run.strategy if run is not None and run.strategy else "unknown"
    who = f"{strategy}:{run.model}" if run is not None and run.model else strategy
    labels = deps.repo.append_labels(
        [
            LabelChange(
                word_pk=word.id,
                label_type=ref.suggested_label,
                status=ValidationStatus(result.verdict),
                proposed_by=existing.proposed_by if existing else proposed_by,
                reasoning=result.reasoning,
                confidence=result.confidence,
                validated_by=who,
                replaces_id=existing.id if existing else None,
            )
        ]
    )
    _refresh(deps, r.id, {word.id})
    return labels


def review_decide(
    deps: ReceiptsDeps, label_id: int, *, accept: bool, reviewer: str = "reviewer", note: str = ""
) -> list[Label]:
    """Accept or reject a NEEDS_REVIEW label; writes the decision as new rows.

    Accept: the label becomes VALID (a new row replacing the review row); when it was a
    suggested replacement, the label it would replace is marked INVALID. Reject: the label
    becomes INVALID; the label it would have replaced stays as it is.
    """
    label = deps.repo.get_label(label_id)
    if not label.current:
        raise InputError(
            f"Label {label_id} was already reviewed or replaced; `casework receipts review` lists the open items."
        )
    if label.status != ValidationStatus.NEEDS_REVIEW:
        raise InputError(f"Label {label_id} is {label.status.value}, not waiting for review.")
    who = f"human:{reviewer}"
    verdict = "accepted" if accept else "rejected"
    changes = [
        LabelChange(
            word_pk=label.word_pk,
            label_type=label.label_type,
            status=ValidationStatus.VALID if accept else ValidationStatus.INVALID,
            proposed_by=label.proposed_by,
            reasoning=note or f"Review {verdict} by {reviewer}.",
            confidence=100.0,
            validated_by=who,
            replaces_id=label.id,
            consolidated_from_id=label.consolidated_from_id,
        )
    ]
    if accept and label.consolidated_from_id:
        old = deps.repo.get_label(label.consolidated_from_id)
        if old.current and old.label_type != label.label_type:
            changes.append(
                LabelChange(
                    word_pk=old.word_pk,
                    label_type=old.label_type,
                    status=ValidationStatus.INVALID,
                    proposed_by=old.proposed_by,
                    reasoning=f"Replaced by {label.label_type} (review of label {label.id} accepted by {reviewer}).",
                    confidence=100.0,
                    validated_by=who,
                    replaces_id=old.id,
                )
            )
    try:
        rows = deps.repo.append_labels(changes)
    except NotFoundError:
        raise
    _refresh(deps, label.receipt_pk, {label.word_pk})
    return rows
