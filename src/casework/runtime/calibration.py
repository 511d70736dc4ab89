"""Confidence calibration: fit a monotone map from stated to observed confidence, apply it.

``fit_calibration(pairs)`` fits isotonic regression (pool adjacent violators) on
``(confidence 0-100, was it correct)`` pairs from an evaluation run; ``Calibration.apply``
maps a new confidence through it (linear between the fitted knots, flat past the ends), so a
threshold such as "decide only above 80" acts on how often such decisions were right.
``cross_fit`` gives each pair a calibrated value from a fit that did not see it, to score a
calibration on the run it was fitted on. Pure functions and JSON; no app knowledge.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.errors import InputError

__all__ = [
    "Calibration",
    "calibration_path",
    "cross_fit",
    "fit_calibration",
    "load_calibration",
    "save_calibration",
]

MIN_PAIRS = 10
"""Fewer pairs than this say too little to fit a map on."""


@dataclass(frozen=True)
class Calibration:
    """A non-decreasing piecewise-linear map on 0-100 through ``(knots[i], values[i])``."""

    knots: tuple[float, ...]
    values: tuple[float, ...]
    n: int
    """Pairs it was fitted on."""
    method: str = "isotonic"
    source: str = ""
    """Where the pairs came from (an evaluation run id)."""

    def apply(self, confidence: float) -> float:
        x = max(0.0, min(100.0, float(confidence)))
        if x <= self.knots[0]:
            return self.values[0]
        if x >= self.knots[-1]:
            return self.values[-1]
        i = bisect_right(self.knots, x)
        x0, x1 = self.knots[i - 1], self.knots[i]
        y0, y1 = self.values[i - 1], self.values[i]
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "knots": list(self.knots),
            "values": list(self.values),
            "n": self.n,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        knots = tuple(float(k) for k in data["knots"])
        values = tuple(float(v) for v in data["values"])
        if not knots or len(knots) != len(values) or list(knots) != sorted(knots):
            raise ValueError("knots and values must be non-empty, equally long, knots sorted")
        return cls(knots, values, int(data.get("n", 0)), data.get("method", "isotonic"),
                   str(data.get("source", "")))  # fmt: skip


def fit_calibration(
    pairs: Sequence[tuple[float, bool]], *, source: str = "", min_pairs: int = MIN_PAIRS
) -> Calibration:
    """Isotonic fit of correctness (0 or 100) on stated confidence (0-100)."""
    if len(pairs) < min_pairs:
        raise InputError(
            f"Calibration needs at least {min_pairs} decisions with a confidence and a known outcome; got {len(pairs)}."
        )
    # One block per distinct confidence ([sum x, sum y, count]), then pool adjacent violators.
    grouped: dict[float, list[float]] = {}
    for c, ok in pairs:
        x = max(0.0, min(100.0, float(c)))
        block = grouped.setdefault(x, [0.0, 0.0, 0.0])
        block[0] += x
        block[1] += 100.0 if ok else 0.0
        block[2] += 1
    blocks: list[list[float]] = []
    for x in sorted(grouped):
        blocks.append(grouped[x])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            sx, sy, n = blocks.pop()
            blocks[-1] = [blocks[-1][0] + sx, blocks[-1][1] + sy, blocks[-1][2] + n]
    knots = tuple(round(b[0] / b[2], 4) for b in blocks)
    values = tuple(round(b[1] / b[2], 4) for b in blocks)
    return Calibration(knots, values, len(pairs), source=source)


def cross_fit(pairs: Sequence[tuple[float, bool]], *, folds: int = 5) -> list[float]:
    """Each pair's confidence calibrated by a fit on the other folds (fold = index mod
    ``folds``), so a run is not scored on its own fit."""
    folds = max(2, min(folds, len(pairs)))
    out = [0.0] * len(pairs)
    for k in range(folds):
        train = [p for i, p in enumerate(pairs) if i % folds != k]
        cal = fit_calibration(train, min_pairs=1)
        for i, (c, _) in enumerate(pairs):
            if i % folds == k:
                out[i] = cal.apply(c)
    return out


def save_calibration(cal: Calibration, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cal.to_dict(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)  # never a half-written calibration
    return path


def load_calibration(path: Path) -> Calibration | None:
    """The calibration stored at ``path``; None when there is none."""
    if not path.is_file():
        return None
    try:
        return Calibration.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"The calibration file {path} is damaged ({exc}); fit it again with `casework eval calibrate RUN`."
        ) from None


def calibration_path(home: Path, app: str, strategy: str, model: str | None) -> Path:
    """Where the calibration of (app, strategy, model) is stored: ``<home>/calibration/``."""
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in (model or "no-model"))
    return home / "calibration" / app / f"{strategy}--{safe}.json"
