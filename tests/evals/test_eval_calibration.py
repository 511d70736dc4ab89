"""Calibration: reliability bins and ECE on sets with a known answer."""

from __future__ import annotations

import pytest

from casework.evals.evaluators.calibration import (
    calibration_report,
    expected_calibration_error,
    normalize_confidence,
    reliability_bins,
)


def test_miscalibrated_set_has_known_ece() -> None:
    # Ten decisions at 90% of which 5 are right, ten at 20% of which 8 are right:
    # ECE = 0.5 * |0.5 - 0.9| + 0.5 * |0.8 - 0.2| = 0.2 + 0.3 = 0.5
    conf = [0.9] * 10 + [0.2] * 10
    correct = [True] * 5 + [False] * 5 + [True] * 8 + [False] * 2
    assert expected_calibration_error(conf, correct) == pytest.approx(0.5)
    report = calibration_report(conf, correct)
    assert report.mce == pytest.approx(0.6)
    assert report.accuracy == pytest.approx(0.65)
    assert report.mean_confidence == pytest.approx(0.55)
    assert report.overconfidence == pytest.approx(-0.10)
    brier = (5 * 0.1**2 + 5 * 0.9**2 + 8 * 0.8**2 + 2 * 0.2**2) / 20
    assert report.brier == pytest.approx(brier)
    full = [b for b in report.bins if b.count]
    assert [(b.lower, b.count) for b in full] == [(0.2, 10), (0.9, 10)]


def test_overconfident_agent() -> None:
    assert expected_calibration_error([0.95] * 4, [False] * 4) == pytest.approx(0.95)


def test_perfectly_calibrated_set_has_zero_ece() -> None:
    conf = [0.75] * 4 + [0.25] * 4
    correct = [True, True, True, False, True, False, False, False]
    assert expected_calibration_error(conf, correct) == pytest.approx(0.0)


def test_bin_edges() -> None:
    bins = reliability_bins([0.0, 0.1, 0.3, 0.99, 1.0], [True] * 5, n_bins=10)
    counts = [b.count for b in bins]
    assert counts == [1, 1, 0, 1, 0, 0, 0, 0, 0, 2]
    assert bins[2].accuracy is None and bins[2].gap is None


def test_empty_and_normalisation() -> None:
    assert expected_calibration_error([], []) is None
    assert calibration_report([], []).ece is None
    assert normalize_confidence(85) == pytest.approx(0.85)
    assert normalize_confidence(0.85, scale=1) == pytest.approx(0.85)
    assert normalize_confidence(130) == 1.0
    assert normalize_confidence(None) is None
    assert normalize_confidence("high") is None
    assert normalize_confidence(True) is None
