"""Deterministic decision metrics: field match, exact match, accuracy, per-class P/R/F1, confusion.

Plain functions on plain values, so each one is tested directly on hand-built decisions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "NO_PREDICTION",
    "RESERVED_EXPECTED_KEYS",
    "ClassReport",
    "ClassificationReport",
    "classification_report",
    "confusion_matrix",
    "field_match",
    "match_fields_for",
    "values_match",
]

NO_PREDICTION = "(none)"
"""The predicted label of a case that produced no verdict (an error, a missing field)."""

RESERVED_EXPECTED_KEYS = frozenset(
    {"tools", "tool_args", "confidence", "reasoning", "notes", "judge"}
)
"""Expected keys that are not compared field by field (trajectory references, free text)."""


def values_match(expected: Any, actual: Any) -> bool:
    """Equality for decision fields: strings ignore surrounding space, numbers a float's noise,
    lists and objects compare element by element; ``True`` never equals ``1``."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(float(expected), float(actual), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip() == actual.strip()
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            values_match(e, a) for e, a in zip(expected, actual, strict=True)
        )
    if isinstance(expected, dict) and isinstance(actual, dict):
        return set(expected) == set(actual) and all(
            values_match(expected[k], actual[k]) for k in expected
        )
    return bool(expected == actual)


def match_fields_for(expected: Mapping[str, Any], fields: Sequence[str] | None = None) -> list[str]:
    """The expected fields to compare: ``fields`` when given (those present), else every
    expected key that is not reserved."""
    if fields is not None:
        return [f for f in fields if f in expected]
    return [k for k in expected if k not in RESERVED_EXPECTED_KEYS]


def field_match(
    expected: Mapping[str, Any],
    output: Mapping[str, Any] | None,
    fields: Sequence[str] | None = None,
) -> dict[str, bool]:
    """Per-field match of an output against the expected values; a missing output field is a
    mismatch. ``exact match`` of a case is ``all(field_match(...).values())``."""
    output = output or {}
    return {
        f: f in output and values_match(expected[f], output[f])
        for f in match_fields_for(expected, fields)
    }


def confusion_matrix(
    y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str]
) -> list[list[int]]:
    """``matrix[i][j]``: cases whose true label is ``labels[i]`` and predicted ``labels[j]``."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for t, p in zip(y_true, y_pred, strict=True):
        matrix[index[t]][index[p]] += 1
    return matrix


@dataclass
class ClassReport:
    label: str
    precision: float | None
    """None when the class was never predicted."""
    recall: float | None
    """None when the class never occurs in the truth."""
    f1: float | None
    support: int
    predicted: int


@dataclass
class ClassificationReport:
    n: int
    accuracy: float | None
    labels: list[str]
    """Row and column order of ``confusion``: the declared labels, then any others seen."""
    confusion: list[list[int]]
    per_class: list[ClassReport] = field(default_factory=list)
    macro_f1: float | None = None
    """Mean F1 over the classes that occur in the truth."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ordered_labels(
    labels: Iterable[str], y_true: Sequence[str], y_pred: Sequence[str]
) -> list[str]:
    out = list(dict.fromkeys(labels))
    extras = sorted({*y_true, *y_pred} - set(out) - {NO_PREDICTION})
    out += extras
    if NO_PREDICTION in y_pred or NO_PREDICTION in y_true:
        out.append(NO_PREDICTION)
    return out


def classification_report(
    y_true: Sequence[str | None],
    y_pred: Sequence[str | None],
    labels: Sequence[str] = (),
) -> ClassificationReport:
    """Accuracy, per-class precision / recall / F1 and the confusion matrix.

    A ``None`` prediction counts as the label ``(none)``: it is always wrong and it lowers the
    recall of its true class. ``labels`` fixes the order (an app's declared verdicts).
    """
    t = [NO_PREDICTION if v is None else str(v) for v in y_true]
    p = [NO_PREDICTION if v is None else str(v) for v in y_pred]
    order = _ordered_labels(labels, t, p)
    matrix = confusion_matrix(t, p, order)
    n = len(t)
    correct = sum(matrix[i][i] for i in range(len(order)) if order[i] != NO_PREDICTION)
    per_class: list[ClassReport] = []
    for i, label in enumerate(order):
        if label == NO_PREDICTION:
            continue
        tp = matrix[i][i]
        support = sum(matrix[i])
        predicted = sum(row[i] for row in matrix)
        precision = tp / predicted if predicted else None
        recall = tp / support if support else None
        if precision is None or recall is None:
            f1 = None
        elif precision + recall == 0:
            f1 = 0.0
        else:
            f1 = 2 * precision * recall / (precision + recall)
        per_class.append(ClassReport(label, precision, recall, f1, support, predicted))
    present = [c for c in per_class if c.support]
    macro = (sum(c.f1 or 0.0 for c in present) / len(present)) if present else None
    return ClassificationReport(
        n=n,
        accuracy=(correct / n) if n else None,
        labels=order,
        confusion=matrix,
        per_class=per_class,
        macro_f1=macro,
    )
