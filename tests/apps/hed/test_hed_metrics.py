"""The evaluation data (gold strings valid under both validators, routing cases) and metrics."""

from __future__ import annotations

from collections import Counter

import pytest

from casework.apps.hed.agent import route_after_evaluation, route_after_validation
from casework.apps.hed.dataset import load_eval_cases, load_routing_cases
from casework.apps.hed.metrics import (
    canonical,
    exact_match,
    hed_metrics,
    tag_items,
    tag_scores,
)
from casework.apps.hed.validation import js_unavailable_reason, validate_many
from casework.apps.hed.vocabulary import load_vocabulary

CASES = load_eval_cases()


def test_dataset_shape_and_coverage() -> None:
    assert len(CASES) == 87
    assert all(set(c) == {"id", "inputs", "expected", "metadata"} for c in CASES)
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert len({c["inputs"]["description"] for c in CASES}) == len(CASES)
    assert Counter(c["metadata"]["category"] for c in CASES) == {
        "visual": 25,
        "response": 18,
        "auditory": 16,
        "control": 13,
        "agent": 12,
        "audiovisual": 3,
    }


@pytest.mark.parametrize("kind", ["python", "js"])
def test_every_gold_string_is_valid(kind: str) -> None:
    if kind == "js" and js_unavailable_reason():
        pytest.skip(js_unavailable_reason())
    results = validate_many([c["expected"]["hed"] for c in CASES], "8.3.0", validator=kind)
    assert {r.validator for r in results} == {kind}
    assert [c["id"] for c, r in zip(CASES, results, strict=True) if not r.valid] == []
    warned = {
        c["id"]: r.codes or [w.code for w in r.warnings]
        for c, r in zip(CASES, results, strict=True)
        if r.warnings
    }
    assert warned == {"hed-018": ["TAG_EXTENDED"], "hed-024": ["TAG_EXTENDED"]}


def test_routing_cases_follow_the_spec() -> None:
    cases = load_routing_cases()
    assert len(cases) == 12
    for case in cases:
        route = (
            route_after_validation
            if case["inputs"]["after"] == "validate"
            else route_after_evaluation
        )
        assert route(case["inputs"]["state"]) == case["expected"]["next"], case["id"]


def test_tag_items_count_tags_and_groups() -> None:
    items = tag_items("Sensory-event, (Red, Circle), ((Press, Mouse-button))")
    assert items == {
        "sensory-event": 1,
        "red": 1,
        "circle": 1,
        "group:circle|red": 1,
        "press": 1,
        "mouse-button": 1,
        "group:mouse-button|press": 1,
    }


def test_tag_scores_reward_grouping() -> None:
    gold = "Sensory-event, Visual-presentation, (Red, Circle)"
    assert tag_scores(gold, gold)["f1"] == 1.0
    flat = tag_scores(gold, "Sensory-event, Visual-presentation, Red, Circle")
    assert flat["precision"] == 1.0 and flat["recall"] == pytest.approx(4 / 5)
    wrong = tag_scores(gold, "Agent-action, (Blue, Square)")
    assert wrong == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    half = tag_scores("A, B", "A, C")
    assert half["f1"] == pytest.approx(0.5)
    assert tag_scores(gold, "")["f1"] == 0.0


def test_short_form_normalisation_and_exact_match() -> None:
    vocab = load_vocabulary("8.3.0")
    long = "Event/Sensory-event, (Item/Object/Geometric-object/2D-shape/Ellipse/Circle, red)"
    gold = {"hed": "Sensory-event, (Red, Circle)"}
    assert exact_match(gold, {"annotation": long}, vocab.short_form) == 1.0
    assert exact_match(gold, {"annotation": long}) == 0.0  # without the vocabulary: no match
    assert canonical("B, (D, C), A") == canonical("A, B, (C, D)") == "a, b, (c, d)"
    assert exact_match(gold, {"annotation": ""}) == 0.0


def test_hed_metrics_of_one_case() -> None:
    output = {
        "annotation": "Sensory-event, (Red, Circle)",
        "is_valid": True,
        "first_try_valid": False,
    }
    m = hed_metrics({"hed": "Sensory-event, Visual-presentation, (Red, Circle)"}, output)
    assert m["valid"] == 1.0 and m["first_try_valid"] == 0.0 and m["exact_match"] == 0.0
    assert m["tag_precision"] == 1.0 and m["tag_recall"] == pytest.approx(0.8)
