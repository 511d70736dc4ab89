"""A layer's confidence on a case far from every verified example (``novelty_confidence``):
unchanged without examples or near one, scaled linearly down to the floor at ``far``."""

from __future__ import annotations

import pytest

from casework.runtime.memory_layer import (
    FAR_SIMILARITY,
    NEAR_SIMILARITY,
    NOVELTY_FLOOR,
    nearest_similarity,
    novelty_confidence,
)


def test_the_defaults_are_pinned() -> None:
    assert (NEAR_SIMILARITY, FAR_SIMILARITY, NOVELTY_FLOOR) == (0.75, 0.25, 0.5)


def test_no_example_keeps_the_confidence() -> None:
    assert novelty_confidence(60.0, None) == 60.0
    assert novelty_confidence(0.0, None) == 0.0


@pytest.mark.parametrize(
    ("nearest", "expected"),
    [(1.0, 60.0), (0.75, 60.0), (0.6, 51.0), (0.5, 45.0), (0.25, 30.0), (0.1, 30.0), (-0.3, 30.0)],
)
def test_a_far_case_keeps_less_of_a_valid_model_answer(nearest: float, expected: float) -> None:
    assert novelty_confidence(60.0, nearest) == expected


def test_the_scale_is_a_share_of_the_layers_own_confidence() -> None:
    assert novelty_confidence(100.0, 0.5) == 75.0
    assert novelty_confidence(80.0, 0.4, near=0.9, far=0.4, floor=0.0) == 0.0
    assert novelty_confidence(80.0, 0.65, near=0.9, far=0.4, floor=0.0) == 40.0
    # a degenerate band (near <= far) changes nothing rather than dividing by zero
    assert novelty_confidence(80.0, 0.1, near=0.5, far=0.5) == 80.0


class _Memory:
    def __init__(self, sims: list[float]) -> None:
        self.sims = sims
        self.embedded = 0

    def count(self) -> int:
        return len(self.sims)

    def nearest(self, text: str, k: int = 5) -> list[tuple[object, float]]:
        self.embedded += 1
        return [(object(), s) for s in sorted(self.sims, reverse=True)[:k]]


def test_nearest_similarity_is_none_without_examples_and_embeds_nothing() -> None:
    empty = _Memory([])
    assert nearest_similarity(empty, "a case") is None  # type: ignore[arg-type]
    assert empty.embedded == 0
    assert nearest_similarity(_Memory([0.3, 0.81, 0.5]), "a case") == 0.81  # type: ignore[arg-type]
