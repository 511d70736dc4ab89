"""The harmoniser's fixes: validations into outcomes by confidence, and their label rows.

``plan_fixes`` turns validations into outcomes as the spec's ``apply_fixes_from_results`` does
(``policy.fix_outcome``) and ``apply_fixes`` appends the label rows in one transaction:
RELABEL (old label marked INVALID, new label VALID, linked by ``consolidated_from``),
MARK_INVALID, REVIEW (the suggestion enters the NEEDS_REVIEW queue) or KEEP.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from casework.apps.receipts.models import FixOutcome, LabelDecision, ValidationStatus
from casework.apps.receipts.policy import fix_outcome
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.vectors import refresh_labels

if TYPE_CHECKING:
    from casework.apps.receipts.deps import ReceiptsDeps
    from casework.apps.receipts.harmonizer import Outlier

__all__ = ["PlannedFix", "apply_fixes", "plan_fixes"]


@dataclass
class PlannedFix:
    outlier: Outlier
    validation: LabelDecision | None
    outcome: FixOutcome
    changes: list[LabelChange]
    applied_ids: list[int] = field(default_factory=list)
    error: str | None = None


def plan_fixes(
    results: list[tuple[Outlier, LabelDecision | None, str | None]],
) -> list[PlannedFix]:
    """The spec's ``apply_fixes_from_results``: an outcome and the label rows it would append."""
    plans = []
    for o, v, error in results:
        lab = o.label
        has_suggestion = o.suggestion is not None
        if v is None:
            outcome = FixOutcome.REVIEW
        else:
            outcome = fix_outcome(
                v.verdict,
                v.confidence,
                has_suggestion=has_suggestion,
                decided=v.ended_by is not None and v.ended_by.decided,
            )
        run = v.run if v is not None else None
        strategy = run.strategy if run is not None and run.strategy else "harmonizer"
        who = f"{strategy}:{run.model}" if run is not None and run.model else strategy
        why = (v.reasoning if v else f"validation failed: {error}")[:1500]
        evidence_note = "; ".join(o.reasons)
        conf = v.confidence if v else None
        changes: list[LabelChange] = []
        if outcome == FixOutcome.RELABEL:
            changes = [
                LabelChange.retiring(
                    lab,
                    f"Replaced by {o.suggestion}: {evidence_note}",
                    confidence=conf,
                    validated_by=who,
                ),
                LabelChange(
                    word_pk=lab.word_pk,
                    label_type=o.suggestion or lab.label_type,
                    status=ValidationStatus.VALID,
                    proposed_by="harmonizer",
                    reasoning=why,
                    confidence=conf,
                    validated_by=who,
                    consolidated_from_id=lab.id,
                ),
            ]
        elif outcome == FixOutcome.MARK_INVALID:
            changes = [
                LabelChange.retiring(
                    lab, f"{evidence_note}. {why}", confidence=conf, validated_by=who
                ),
            ]
        elif outcome == FixOutcome.REVIEW:
            if has_suggestion:
                changes = [
                    LabelChange(
                        word_pk=lab.word_pk,
                        label_type=o.suggestion or lab.label_type,
                        status=ValidationStatus.NEEDS_REVIEW,
                        proposed_by="harmonizer",
                        reasoning=f"Suggested instead of {lab.label_type} ({evidence_note}). {why}",
                        confidence=conf,
                        validated_by=who,
                        consolidated_from_id=lab.id,
                    ),
                ]
            else:
                changes = [
                    LabelChange(
                        word_pk=lab.word_pk,
                        label_type=lab.label_type,
                        status=ValidationStatus.NEEDS_REVIEW,
                        proposed_by=lab.proposed_by,
                        reasoning=f"{evidence_note}. {why}",
                        confidence=conf,
                        validated_by=who,
                        replaces_id=lab.id,
                    ),
                ]
        plans.append(
            PlannedFix(outlier=o, validation=v, outcome=outcome, changes=changes, error=error)
        )
    return plans


def apply_fixes(deps: ReceiptsDeps, plans: list[PlannedFix]) -> None:
    """Append every planned label row in one transaction, then refresh the vector metadata."""
    changes = [ch for p in plans for ch in p.changes]
    if not changes:
        return
    rows = deps.repo.append_labels(changes)
    it = iter(rows)
    for p in plans:
        p.applied_ids = [next(it).id for _ in p.changes]
    by_receipt: dict[int, set[int]] = defaultdict(set)
    for p in plans:
        if p.changes:
            by_receipt[p.outlier.receipt.id].add(p.outlier.label.word_pk)
    for receipt_pk, word_pks in by_receipt.items():
        refresh_labels(deps.repo, deps.vectors, receipt_pk, word_pks)
