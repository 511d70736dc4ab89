"""Confidence calibration: reliability bins, expected calibration error, Brier score.

For any decision that carries a confidence: pairs of (confidence in [0, 1], was it correct).
A well-calibrated agent is right 80% of the time when it says 80%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "CalibrationReport",
    "ReliabilityBin",
    "calibration_report",
    "expected_calibration_error",
    "normalize_confidence",
    "reliability_bins",
]


def normalize_confidence(value: Any, scale: float = 100.0) -> float | None:
    """A confidence on ``scale`` (100 for 0-100) as a probability in [0, 1]; None if absent
    or not a number. Values outside the scale are clipped."""
    if value is None or isinstance(value, bool):
        return None
    try:
        x = float(value) / float(scale)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if x != x:  # NaN
        return None
    return min(1.0, max(0.0, x))


@dataclass
class ReliabilityBin:
    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None

    @property
    def gap(self) -> float | None:
        if self.mean_confidence is None or self.accuracy is None:
            return None
        return abs(self.accuracy - self.mean_confidence)


def reliability_bins(
    confidences: Sequence[float], correct: Sequence[bool], n_bins: int = 10
) -> list[ReliabilityBin]:
    """Equal-width bins over [0, 1]; bin ``i`` holds ``i/n <= c < (i+1)/n`` and the last bin
    also holds ``c == 1``."""
    if len(confidences) != len(correct):
        raise ValueError("confidences and correct differ in length")
    members: list[list[int]] = [[] for _ in range(n_bins)]
    for k, c in enumerate(confidences):
        members[min(int(c * n_bins + 1e-9), n_bins - 1)].append(k)
    bins = []
    for i, idx in enumerate(members):
        mean_c: float | None
        acc: float | None
        if idx:
            mean_c = sum(confidences[k] for k in idx) / len(idx)
            acc = sum(1 for k in idx if correct[k]) / len(idx)
        else:
            mean_c = acc = None
        bins.append(ReliabilityBin(i / n_bins, (i + 1) / n_bins, len(idx), mean_c, acc))
    return bins


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], n_bins: int = 10
) -> float | None:
    """ECE = sum over bins of (bin size / N) * |accuracy(bin) - mean confidence(bin)|."""
    n = len(confidences)
    if n == 0:
        return None
    bins = reliability_bins(confidences, correct, n_bins)
    return sum(b.count / n * (b.gap or 0.0) for b in bins)


@dataclass
class CalibrationReport:
    n: int
    ece: float | None
    mce: float | None
    """Maximum calibration error: the largest gap of a non-empty bin."""
    brier: float | None
    mean_confidence: float | None
    accuracy: float | None
    overconfidence: float | None
    """Mean confidence minus accuracy (> 0: the agent claims more than it delivers)."""
    bins: list[ReliabilityBin] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for b, raw in zip(self.bins, data["bins"], strict=True):
            raw["gap"] = b.gap
        return data


def calibration_report(
    confidences: Sequence[float], correct: Sequence[bool], n_bins: int = 10
) -> CalibrationReport:
    n = len(confidences)
    bins = reliability_bins(confidences, correct, n_bins)
    if n == 0:
        return CalibrationReport(0, None, None, None, None, None, None, bins)
    mean_c = sum(confidences) / n
    acc = sum(1 for c in correct if c) / n
    gaps = [b.gap for b in bins if b.count]
    return CalibrationReport(
        n=n,
        ece=expected_calibration_error(confidences, correct, n_bins),
        mce=max(g for g in gaps if g is not None) if gaps else None,
        brier=sum(
            (c - (1.0 if ok else 0.0)) ** 2 for c, ok in zip(confidences, correct, strict=True)
        )
        / n,
        mean_confidence=mean_c,
        accuracy=acc,
        overconfidence=mean_c - acc,
        bins=bins,
    )
