"""Evaluation metrics: pure functions over (expected, output) dicts of one case.

``expected`` is a dataset case's ``expected`` (``{"hed": gold}``); ``output`` is a decision as
``--json`` prints it (``annotation``, ``is_valid``, ``first_try_valid``, ...). The evaluation
harness (``casework eval hed``, ``evalsuite.py``) calls them per case and averages. Tags are compared
after normalising to short form (``short_form``, from the schema vocabulary) and case; a
group counts as one more item (its direct tags as a set), so grouping is scored as well.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from casework.apps.hed.rules import Group, parse_hed
from casework.apps.hed.vocabulary import load_vocabulary

__all__ = [
    "canonical",
    "exact_match",
    "first_try_validity",
    "hed_metrics",
    "short_form_for",
    "tag_items",
    "tag_scores",
    "validity",
]

ShortForm = Callable[[str], str]


def short_form_for(schema: str) -> ShortForm:
    """A tag's short form in the schema's vocabulary (the form tags are compared in)."""
    return load_vocabulary(schema).short_form


def _norm(tag: str, short_form: ShortForm) -> str:
    return " ".join(short_form(tag.strip()).lower().split())


def canonical(hed: str, short_form: ShortForm = str) -> str:
    """An order-insensitive canonical string: short-form lower-case tags, groups sorted."""

    def walk(group: Group) -> str:
        parts = sorted(_norm(t, short_form) for t in group.tags)
        parts += sorted(f"({walk(g)})" for g in group.groups)
        return ", ".join(parts)

    return walk(parse_hed(hed))


def tag_items(hed: str, short_form: ShortForm = str) -> Counter[str]:
    """Every tag (normalised), plus one item per group: ``group:{its direct tags, sorted}``."""
    items: Counter[str] = Counter()

    def walk(group: Group, top: bool) -> None:
        tags = [_norm(t, short_form) for t in group.tags]
        items.update(tags)
        if not top and tags:
            items[f"group:{'|'.join(sorted(tags))}"] += 1
        for g in group.groups:
            walk(g, False)

    walk(parse_hed(hed), True)
    return items


def tag_scores(gold: str, predicted: str, short_form: ShortForm = str) -> dict[str, float]:
    """Precision, recall and F1 of the predicted items against the gold items (multisets)."""
    want, got = tag_items(gold, short_form), tag_items(predicted, short_form)
    hit = sum((want & got).values())
    precision = hit / sum(got.values()) if got else 0.0
    recall = hit / sum(want.values()) if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def validity(expected: dict[str, Any], output: dict[str, Any]) -> float:
    """1.0 when the final annotation is valid HED."""
    return 1.0 if output.get("is_valid") else 0.0


def first_try_validity(expected: dict[str, Any], output: dict[str, Any]) -> float:
    """1.0 when the first annotation was already valid."""
    return 1.0 if output.get("first_try_valid") else 0.0


def exact_match(
    expected: dict[str, Any], output: dict[str, Any], short_form: ShortForm = str
) -> float:
    """1.0 when the annotation equals the gold string up to tag order, case and long form."""
    gold, got = expected.get("hed", ""), output.get("annotation", "")
    return 1.0 if got and canonical(gold, short_form) == canonical(got, short_form) else 0.0


def hed_metrics(
    expected: dict[str, Any], output: dict[str, Any], short_form: ShortForm = str
) -> dict[str, float]:
    """The annotation metrics of one case (``evalsuite.hed_case_metrics`` adds the run's)."""
    scores = tag_scores(expected.get("hed", ""), output.get("annotation", ""), short_form)
    return {
        "valid": validity(expected, output),
        "first_try_valid": first_try_validity(expected, output),
        "exact_match": exact_match(expected, output, short_form),
        "tag_precision": scores["precision"],
        "tag_recall": scores["recall"],
        "tag_f1": scores["f1"],
    }
