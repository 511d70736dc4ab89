"""The decision policy: VALID / INVALID only above 80; fixes by confidence."""

from __future__ import annotations

import pytest

from casework.apps.receipts.models import FixOutcome
from casework.apps.receipts.policy import apply_policy, fix_outcome


@pytest.mark.parametrize(
    ("decision", "confidence", "expected"),
    [
        ("VALID", 95, "VALID"),
        ("VALID", 80.5, "VALID"),
        ("VALID", 80, "NEEDS_REVIEW"),
        ("INVALID", 81, "INVALID"),
        ("INVALID", 79.9, "NEEDS_REVIEW"),
        ("NEEDS_REVIEW", 99, "NEEDS_REVIEW"),
        ("VALID", 150, "VALID"),
    ],
)
def test_apply_policy(decision, confidence, expected):
    final, conf, downgraded = apply_policy(decision, confidence)
    assert final == expected
    assert 0 <= conf <= 100
    assert downgraded == (final != decision)


@pytest.mark.parametrize(
    ("decision", "confidence", "has_suggestion", "expected"),
    [
        ("VALID", 92, True, FixOutcome.RELABEL),
        ("VALID", 75, True, FixOutcome.REVIEW),  # downgraded by the policy, medium confidence
        (
            "INVALID",
            95,
            True,
            FixOutcome.REVIEW,
        ),  # the suggestion is wrong; the old label stays doubtful
        ("NEEDS_REVIEW", 49, True, FixOutcome.MARK_INVALID),
        ("INVALID", 30, True, FixOutcome.MARK_INVALID),
        ("NEEDS_REVIEW", 50, True, FixOutcome.REVIEW),
        ("VALID", 90, False, FixOutcome.KEEP),
        ("INVALID", 90, False, FixOutcome.MARK_INVALID),
        ("NEEDS_REVIEW", 60, False, FixOutcome.REVIEW),
        ("NEEDS_REVIEW", 10, False, FixOutcome.MARK_INVALID),
    ],
)
def test_fix_outcome(decision, confidence, has_suggestion, expected):
    assert fix_outcome(decision, confidence, has_suggestion=has_suggestion) == expected


def test_an_undecided_run_goes_to_review_not_invalid():
    assert fix_outcome("NEEDS_REVIEW", 0, decided=False) == FixOutcome.REVIEW


def test_the_threshold_acts_on_the_calibrated_confidence():
    from casework.runtime.calibration import Calibration

    # decisions stated at 90% were right 70% of the time, at 98% right 95% of the time
    cal = Calibration(knots=(90.0, 98.0), values=(70.0, 95.0), n=40)
    assert apply_policy("VALID", 90, cal) == ("NEEDS_REVIEW", 90.0, True)
    assert apply_policy("VALID", 98, cal) == ("VALID", 98.0, False)
    assert apply_policy("INVALID", 94, cal) == ("INVALID", 94.0, False)  # 82.5 calibrated
    assert apply_policy("INVALID", 93, cal) == ("NEEDS_REVIEW", 93.0, True)  # 79.4
    assert apply_policy("VALID", 90) == ("VALID", 90.0, False)  # no calibration stored
