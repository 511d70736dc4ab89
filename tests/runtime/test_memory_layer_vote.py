"""The calibrated neighbour vote (``casework.runtime.memory_vote``): the vote's strength, the
leave-one-out calibration on the examples themselves (too few examples: never sure; a
separable set: sure; mixed votes: their measured accuracy), and the layer on a real memory
whose embeddings are scripted, so every similarity is exact. Removing an example takes its
effect with it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from casework.runtime.decision import Decision
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import answer_key, examples_used
from casework.runtime.memory_vote import (
    MIN_EXAMPLES,
    Calibration,
    calibrate,
    calibration_of,
    vote,
    vote_layer,
)
from casework.runtime.runconfig import RunConfig
from casework.stores import open_stores

CLUSTERS = ("ack", "upd", "ask")


def scripted(texts: list[str]) -> list[list[float]]:
    """``"ack 3"`` -> a unit vector near the ``ack`` axis, turned by 0.02 rad per index
    towards a shared fourth axis: a cluster's members are at cosine > 0.98 to each other, two
    clusters' at most 0.15."""
    out = []
    for text in texts:
        name, index = text.split()
        angle = 0.02 * int(index)
        v = [0.0, 0.0, 0.0, math.sin(angle)]
        v[CLUSTERS.index(name)] = math.cos(angle)
        out.append(v)
    return out


def test_the_vote_weighs_each_neighbour_by_its_similarity_to_the_fourth() -> None:
    found = vote([0.9, 0.5, 0.8], ["a", "a", "b"], k=3, power=4)
    # a: 0.9^4 + 0.5^4 = 0.7186, b: 0.8^4 = 0.4096
    assert found.answer == "a" and found.strength == pytest.approx(0.7186 / 1.1282, abs=1e-6)
    assert found.voters == [0, 1]  # nearest first
    assert vote([0.9, 0.5, 0.8], ["a", "a", "b"], k=2, power=4).strength == pytest.approx(
        0.6561 / (0.6561 + 0.4096), abs=1e-6
    )
    assert vote([], [], k=3).answer is None
    assert vote([-0.2, 0.0], ["a", "b"]).answer is None  # nothing similar: no vote


def test_too_few_examples_are_never_sure_even_when_every_vote_is_right() -> None:
    texts = [f"{c} {i}" for c in CLUSTERS for i in range(6)]  # 18 < MIN_EXAMPLES
    few = calibrate(np.array(scripted(texts)), [t.split()[0] for t in texts])
    assert few.examples == 18 < MIN_EXAMPLES
    assert all(right for _, right in few.votes)
    assert few.confidence(1.0) == 0.0


def test_a_separable_set_is_sure_and_its_table_says_why() -> None:
    texts = [f"{c} {i}" for c in CLUSTERS for i in range(8)]
    sure = calibrate(np.array(scripted(texts)), [t.split()[0] for t in texts])
    assert sure.table() == [(1.0, 24, 1.0)]  # every left-out example: unanimous and right
    assert sure.confidence(1.0) == 100.0


def test_the_confidence_is_the_accuracy_of_the_votes_of_about_the_same_strength() -> None:
    votes = ((1.0, True),) * 12 + ((0.8, True),) * 5 + ((0.8, False),) * 3 + ((0.6, False),) * 5
    cal = Calibration(25, votes)
    assert cal.table() == [(1.0, 12, 1.0), (0.8, 20, 0.85), (0.6, 25, 0.68)]
    assert cal.confidence(1.0) == 100.0  # the ten strongest: all right
    assert cal.confidence(0.95) == 100.0
    # nearest 0.85: the eight votes at 0.8 (5 right), then two at 1.0
    assert cal.confidence(0.85) == 70.0
    assert cal.confidence(0.8) == 70.0  # the eight at 0.8, then two at 1.0 (0.6 is as far)
    assert cal.confidence(0.6) == 50.0  # the five wrong at 0.6, then five right at 0.8
    assert Calibration(9, votes[:9]).confidence(1.0) == 0.0  # too few examples


# ---------------------------------------------------------------- the layer on a real memory


def _decide(answer, confidence, reasoning) -> Decision:
    verdict = answer["label"] if answer else "NEEDS_REVIEW"
    return Decision(verdict=verdict, confidence=confidence, reasoning=reasoning)


@pytest.fixture
def memory(settings) -> Memory:
    return Memory(open_stores(settings).engine, "toy", embedder=scripted)


def _run(memory: Memory, text: str) -> Decision:
    layer = vote_layer(lambda deps, config: memory, lambda input: input, _decide)
    return layer(text, None, RunConfig(models=None))  # type: ignore[arg-type]  # no model asked


def _add(memory: Memory, text: str, label: str) -> int:
    return memory.add(text, {"text": text}, {"label": label}, verified_by="ana", source="api").id


def test_the_layer_answers_once_enough_examples_agree_and_cites_the_voters(memory) -> None:
    ids = [_add(memory, f"{c} {i}", c) for i in range(6) for c in CLUSTERS]  # 18
    early = _run(memory, "upd 9")
    assert (early.verdict, early.confidence) == ("NEEDS_REVIEW", 0.0)
    assert early.reasoning == "18 verified example(s); the vote needs 20."

    ids += [_add(memory, f"{c} {i}", c) for i in (6, 7) for c in CLUSTERS]  # 24
    later = _run(memory, "upd 9")
    assert (later.verdict, later.confidence) == ("upd", 100.0)
    # the seven nearest are the seven nearest ``upd`` examples, nearest first
    assert examples_used(later) == [ids[i] for i in (22, 19, 16, 13, 10, 7, 4)]
    assert "strength 1.00" in later.reasoning and "24 examples" in later.reasoning
    assert later.run is not None and later.run.strategy == "memory-vote"


def test_removing_wrong_examples_takes_their_effect_away(memory) -> None:
    for i in range(8):
        for c in CLUSTERS:
            _add(memory, f"{c} {i}", c)
    assert _run(memory, "ack 9").confidence == 100.0
    # A reviewer's slips: three ``ack`` replies verified as ``ask``.
    wrong = [_add(memory, f"ack {i}", "ask") for i in (20, 21, 22)]
    slipped = _run(memory, "ack 20")
    # Near the slips the vote is split (4 of 7, strength 0.53), and of the ten left-out votes
    # nearest that strength three are the slips' own, wrong: not sure.
    assert (slipped.verdict, slipped.confidence) == ("ack", 70.0)
    assert "strength 0.53" in slipped.reasoning
    for example in wrong:
        memory.delete(example)
    restored = _run(memory, "ack 20")
    assert (restored.verdict, restored.confidence) == ("ack", 100.0)
    assert not set(wrong) & set(examples_used(restored))


def test_an_answer_is_compared_whatever_its_key_order() -> None:
    assert answer_key({"a": 1, "b": 2}) == answer_key({"b": 2, "a": 1})


def test_the_calibration_is_kept_per_memory_version(memory) -> None:
    for i in range(7):
        for c in CLUSTERS:
            _add(memory, f"{c} {i}", c)
    first = calibration_of(memory.list(limit=100))
    assert calibration_of(memory.list(limit=100)) is first  # the same examples: reused
    memory.delete(memory.list(limit=1)[0].id)
    after = calibration_of(memory.list(limit=100))
    assert after is not first and (first.examples, after.examples) == (21, 20)
