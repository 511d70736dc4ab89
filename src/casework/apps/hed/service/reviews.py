"""A person's decision on an annotation waiting for review, and the settled answer of one
already decided."""

from __future__ import annotations

from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import REVIEW_WAITING, StoredAnnotation
from casework.apps.hed.service.schema import validate_strings
from casework.errors import InputError, NotFoundError
from casework.runtime.memory import ExampleDraft
from casework.runtime.review_provider import (
    DecideOutcome,
    outcome_of,
    outcome_text,
    settle_once,
)

__all__ = ["decide_review", "settled_outcome"]


def decide_review(
    deps: HedDeps, annotation_id: int, action: str, *, edit: str | None, note: str, actor: str
) -> DecideOutcome:
    """Settle a stored annotation waiting for a person, once: accept the draft (only a valid
    one), correct it (the correction is validated against the run's schema first: an invalid
    one is refused with its errors and nothing changes) or reject it."""
    stored = deps.repo.annotation(annotation_id)
    if stored is None or stored.review_status is None:
        raise NotFoundError(f"No hed review item {annotation_id}; open one from the inbox.")
    if stored.review_status != REVIEW_WAITING:
        return settled_outcome(stored)
    outcome = outcome_of(action)
    corrected = None
    if action == "approve" and not stored.result.get("is_valid"):
        raise InputError("The draft annotation is not valid HED; correct it, or reject it.")
    if action == "edit":
        corrected = (edit or "").strip()
        if not corrected:
            raise InputError("Write the corrected HED annotation, or reject the item.")
        checked = validate_strings([corrected], stored.schema_version, validator=deps.validator)
        if not checked[0].valid:
            errors = "; ".join(f"{i.code}: {i.message}" for i in checked[0].errors[:3])
            raise InputError(f"The correction is not valid HED {stored.schema_version}: {errors}.")
    applied = deps.repo.settle_review(
        annotation_id, outcome=outcome, corrected=corrected, decided_by=actor, note=note
    )
    return settle_once(
        applied,
        deps.repo.annotation(annotation_id),
        settled_outcome,
        outcome=outcome,
        corrected=corrected,
        draft=stored.annotation,
        actor=actor,
        example_of=lambda hed: ExampleDraft(
            inputs={"description": stored.description, "schema_version": stored.schema_version},
            answer={"hed": hed},
            run_id=stored.run_id or None,
        ),
    )


def settled_outcome(stored: StoredAnnotation) -> DecideOutcome:
    """Who settled a decided item, and how (a repeat changes nothing)."""
    return DecideOutcome(
        applied=False,
        outcome=outcome_text(stored.review_outcome, stored.corrected_annotation),
        decided_by=stored.decided_by or "",
        decided_at=stored.decided_at,
    )
