"""Field match, exact match, accuracy, per-class P/R/F1 and the confusion matrix, by hand."""

from __future__ import annotations

import pytest

from casework.evals.evaluators.classification import (
    NO_PREDICTION,
    classification_report,
    confusion_matrix,
    field_match,
    values_match,
)


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ("VALID", " VALID ", True),
        ("VALID", "valid", False),
        (30, 30.0, True),
        (0.1 + 0.2, 0.3, True),
        (True, 1, False),
        (False, False, True),
        ([1, "a"], [1, "a"], True),
        ([1, 2], [2, 1], False),
        ({"a": 1}, {"a": 1.0}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        (None, None, True),
        (None, "x", False),
    ],
)
def test_values_match(expected: object, actual: object, same: bool) -> None:
    assert values_match(expected, actual) is same


def test_field_match_skips_reserved_keys_and_counts_missing_fields() -> None:
    expected = {
        "verdict": "INVALID",
        "overlap_minutes": 45,
        "should_detect_conflict": True,
        "reasoning": "free text",
        "confidence": 90,
        "tools": ["a"],
    }
    output = {
        "verdict": "INVALID",
        "overlap_minutes": 40,
        "reasoning": "other text",
        "confidence": 10,
    }
    assert field_match(expected, output) == {
        "verdict": True,
        "overlap_minutes": False,
        "should_detect_conflict": False,
    }
    assert field_match(expected, output, ["verdict"]) == {"verdict": True}
    assert field_match(expected, None, ["verdict"]) == {"verdict": False}


def test_confusion_matrix_rows_are_truth() -> None:
    m = confusion_matrix(["A", "A", "B", "B", "B"], ["A", "B", "B", "B", "A"], ["A", "B"])
    assert m == [[1, 1], [1, 2]]


def test_classification_report_by_hand() -> None:
    # truth:      V V V V I I I R
    # predicted:  V V V I I V - I     ('-' is no verdict)
    y_true = ["VALID"] * 4 + ["INVALID"] * 3 + ["NEEDS_REVIEW"]
    y_pred = ["VALID", "VALID", "VALID", "INVALID", "INVALID", "VALID", None, "INVALID"]
    r = classification_report(y_true, y_pred, ["VALID", "INVALID", "NEEDS_REVIEW"])
    assert r.n == 8
    assert r.accuracy == pytest.approx(4 / 8)
    assert r.labels == ["VALID", "INVALID", "NEEDS_REVIEW", NO_PREDICTION]
    assert r.confusion == [
        [3, 1, 0, 0],
        [1, 1, 0, 1],
        [0, 1, 0, 0],
        [0, 0, 0, 0],
    ]
    per = {c.label: c for c in r.per_class}
    assert per["VALID"].precision == pytest.approx(3 / 4) and per["VALID"].recall == pytest.approx(
        3 / 4
    )
    assert per["VALID"].f1 == pytest.approx(3 / 4)
    assert per["INVALID"].precision == pytest.approx(1 / 3) and per[
        "INVALID"
    ].recall == pytest.approx(1 / 3)
    assert per["NEEDS_REVIEW"].precision is None and per["NEEDS_REVIEW"].recall == 0.0
    assert per["NEEDS_REVIEW"].support == 1 and per["NEEDS_REVIEW"].predicted == 0
    assert r.macro_f1 == pytest.approx((3 / 4 + 1 / 3 + 0) / 3)


def test_unknown_labels_are_appended_and_empty_input_is_safe() -> None:
    r = classification_report(["A"], ["Z"], ["A"])
    assert r.labels == ["A", "Z"] and r.accuracy == 0.0
    empty = classification_report([], [], ["A"])
    assert empty.accuracy is None and empty.macro_f1 is None
