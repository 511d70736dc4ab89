"""The hed review face: unsure annotations wait in the inbox; a correction is validated first."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import HedDecision
from casework.apps.hed.repository import HedRepository
from casework.apps.hed.review import HedReview
from casework.errors import InputError, NotFoundError
from casework.runtime.context import Caller
from casework.runtime.review_provider import ReviewFilters
from casework.stores.sql import get_engine, migrate

GOOD = "Sensory-event, Visual-presentation, (Red, Circle)"
ALICE = Caller(user_id=1, name="alice", role="reviewer")
BOB = Caller(user_id=2, name="bob", role="reviewer")


@pytest.fixture
def review(tmp_path: Path, settings) -> HedReview:
    engine = get_engine(f"sqlite:///{tmp_path / 'hed.db'}")
    migrate(engine)
    repo = HedRepository(engine)
    repo.save(
        HedDecision(
            verdict="VALID",
            confidence=0.9,
            reasoning="valid, faithful",
            description="a red circle",
            annotation=GOOD,
            is_valid=True,
        )
    )
    repo.save(
        HedDecision(
            verdict="NEEDS_REVIEW",
            confidence=0.2,
            reasoning="nobody was sure",
            description="A blue square appears on the left",
            annotation="Sensory-event, Blue, Squarish",
            is_valid=False,
            validation_errors=["TAG_INVALID: 'Squarish' in Squarish is not a valid base tag."],
        )
    )
    return HedReview(settings, deps=HedDeps(settings=settings, validator="python", repo=repo))


def test_only_unsure_annotations_wait(review: HedReview) -> None:
    waiting = review.items(ReviewFilters(), limit=10)
    assert [(i.id, i.kind, i.status) for i in waiting] == [("2", "unsure_annotation", "waiting")]
    assert waiting[0].summary == "NEEDS_REVIEW: Sensory-event, Blue, Squarish"
    assert review.count(ReviewFilters()) == 1
    assert review.count(ReviewFilters(status="decided")) == 0
    with pytest.raises(InputError, match="use one of: waiting, decided"):
        review.items(ReviewFilters(status="done"), limit=10)


def test_the_page_shows_the_draft_and_what_the_validator_said(review: HedReview) -> None:
    detail = review.get("2")
    assert detail.actions == ["edit", "reject"]  # an invalid draft cannot be accepted as is
    assert detail.edit_value == "Sensory-event, Blue, Squarish"
    assert detail.sections[1].fields["valid"] == "no"
    assert detail.sections[2].rows == [
        ["error", "TAG_INVALID: 'Squarish' in Squarish is not a valid base tag."]
    ]
    with pytest.raises(NotFoundError):
        review.get("1")  # VALID: nothing to review
    with pytest.raises(NotFoundError):
        review.get("x")


def test_a_correction_is_validated_before_it_is_kept(review: HedReview) -> None:
    with pytest.raises(InputError, match="not valid HED"):
        review.decide("2", "approve", note="", edit=None, caller=ALICE)
    with pytest.raises(InputError, match="TAG_INVALID"):
        review.decide("2", "edit", note="", edit="Sensory-event, Squarish", caller=ALICE)
    assert review.count(ReviewFilters()) == 1  # the refused correction changed nothing

    fixed = "Sensory-event, Visual-presentation, (Blue, Square), (Left-side-of, Computer-screen)"
    done = review.decide("2", "edit", note="shape word", edit=fixed, caller=ALICE)
    assert (done.applied, done.outcome, done.decided_by) == (True, f"corrected to {fixed}", "alice")
    assert done.example is not None  # the correction becomes a verified example
    assert (done.example.inputs["description"], done.example.answer) == (
        "A blue square appears on the left",
        {"hed": fixed},
    )

    again = review.decide("2", "reject", note="", edit=None, caller=BOB)
    assert (again.applied, again.outcome, again.decided_by) == (
        False,
        f"corrected to {fixed}",
        "alice",
    )
    assert review.count(ReviewFilters()) == 0
    assert [i.id for i in review.items(ReviewFilters(status="decided"), limit=10)] == ["2"]
    page = review.get("2")
    assert (page.actions, page.decided_by, page.outcome) == ([], "alice", f"corrected to {fixed}")


def test_reject(review: HedReview) -> None:
    done = review.decide("2", "reject", note="not an event", edit=None, caller=BOB)
    assert (done.applied, done.outcome, done.decided_by) == (True, "rejected", "bob")
    assert done.example is None  # a rejection verifies nothing
