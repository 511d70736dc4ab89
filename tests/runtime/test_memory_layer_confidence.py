"""How sure the memory layer is: the similarity of the nearest agreeing example AND how many
near examples agree (few examples near a case: less sure, so early cases of a stream reach
the next layer or a person more often than the same cases later). Scripted memories: the
neighbours and their similarities are given, not embedded."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from casework.runtime.memory import Example
from casework.runtime.memory_layer import MEMORY_THRESHOLD, recall


def _example(i: int, label: str) -> Example:
    return Example(
        id=i,
        app="toy",
        key_text=f"text {i}",
        inputs={},
        answer={"label": label},
        verified_by="ana",
        verified_at=datetime(2026, 11, 27, tzinfo=UTC),
        source="review",
        run_id=None,
        owner_id=None,
    )


class Scripted:
    """A memory whose nearest examples are given: ``[(label, similarity), ...]``."""

    def __init__(self, neighbours: list[tuple[str, float]]) -> None:
        self.neighbours = [(_example(i + 1, lab), sim) for i, (lab, sim) in enumerate(neighbours)]

    def nearest(self, text: str, k: int = 5) -> list[tuple[Example, float]]:
        return self.neighbours[:k]


def _recall(neighbours: list[tuple[str, float]]) -> tuple[Any, float]:
    found = recall(Scripted(neighbours), "the case")  # type: ignore[arg-type]
    return (found.answer or {}).get("label"), found.confidence


def test_more_agreeing_neighbours_at_the_same_similarity_make_it_surer() -> None:
    assert _recall([("late", 0.92)]) == ("late", 84.0)
    assert _recall([("late", 0.92)] * 2) == ("late", 88.0)
    assert _recall([("late", 0.92)] * 4) == ("late", 90.0)
    # one example at 0.92 stays below the threshold; four agreeing ones reach it
    assert _recall([("late", 0.92)])[1] < MEMORY_THRESHOLD <= _recall([("late", 0.92)] * 4)[1]


def test_a_closer_example_is_surer_and_an_exact_repeat_is_certain() -> None:
    assert _recall([("late", 0.96)]) == ("late", 92.0)
    assert _recall([("late", 1.0)]) == ("late", 100.0)


def test_disagreeing_near_neighbours_cost_their_share_of_the_vote() -> None:
    label, confidence = _recall([("late", 0.96), ("update", 0.92), ("update", 0.92)])
    # the nearer example outweighs the two further ones (votes weigh exp((s - 1) / 0.05)),
    # but the answer holds only its share of the votes: 0.527 * (1 - 0.04 * 2) * 100
    assert label == "late" and confidence == pytest.approx(48.46, abs=0.01)
    label, confidence = _recall([("late", 0.96), *[("update", 0.92)] * 3])
    # three agreeing further ones win the vote: 0.574 * (1 - 0.08 * 4/3) * 100
    assert label == "update" and confidence == pytest.approx(51.29, abs=0.01)


def test_neighbours_below_the_near_similarity_do_not_vote() -> None:
    assert _recall([("late", 0.70), ("late", 0.60)]) == (None, 0.0)
    assert _recall([("late", 0.92), ("update", 0.70)]) == ("late", 84.0)


def test_the_threshold_sweep_reads_as_a_markdown_table() -> None:
    from casework.runtime.memory_layer import threshold_report, threshold_table

    rows = threshold_table([(95.0, True), (85.0, False), (0.0, False)], (80.0, 90.0))
    assert threshold_report(rows) == (
        "| threshold | answered | right when answered |\n"
        "|---|---|---|\n"
        "| 80 | 2 (66.7%) | 1/2 = 0.500 |\n"
        "| 90 | 1 (33.3%) | 1/1 = 1.000 |\n"
        "lowest threshold right >= 95 % of the time: 90"
    )
