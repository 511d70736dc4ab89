"""A neighbour vote over every verified example, calibrated on the examples themselves.

The memory layer (``memory_layer.recall``) answers a case only when one verified example is
nearly a repeat of it. Short, varied cases (a rider's "Sounds great, thanks" against a
verified "Yes, that works for me") are rarely that close, yet once reviewers have verified
dozens of them the examples together say the answer well. The vote layer here answers those:

- **The vote** (``vote``): the ``k`` examples nearest the case (MiniLM cosine) vote for their
  verified answer, each weighing ``max(similarity, 0) ** VOTE_POWER`` (a near example counts
  more than a loose one); the **strength** is the winning answer's share of the weight.
- **The calibration** (``calibrate``): leave-one-out on the examples themselves. Each stored
  example is classified by the vote of the others; ``(strength, right)`` per example says how
  often a vote of a given strength is right on this caller's own cases.
- **The confidence** (``Calibration.confidence``): 100 x the leave-one-out accuracy of the
  ``MIN_SUPPORT`` votes nearest in strength to the case's vote (how often votes like this one
  were right). Below ``MIN_EXAMPLES`` examples it is 0: few examples -> never sure -> the
  case goes on to the model or a person. The cascade's threshold (``VOTE_THRESHOLD``, 95)
  then answers only where the caller's own votes of that strength were right 95 % of the
  time. Measured, the accuracy of all votes at least as strong (a cumulative curve) promised
  too much: with 20-30 examples the strong, easy votes filled it, and on the 120 replies of
  vanpool's README a vote sure by it was right 0.82-0.90 of the time (simulated), against
  0.94-0.96 with the votes of about the same strength.

This is sound for an app whose answer is one of a closed set (a reply's bucket, a word's
label): the examples' answers are the vote's options and leave-one-out measures exactly the
layer's own error on cases like the caller's. It is not for free-form answers (an SQL query,
an annotation), where two examples rarely share an answer to vote for.

A removed example leaves the vote and the calibration at once: the calibration is cached per
memory version (the ids and answers of the examples; ``_CACHE``), so a deletion or an
addition makes a new one.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from casework.runtime.decision import Decision, EndReason, RunInfo
from casework.runtime.memory import Example, Memory
from casework.runtime.memory_layer import answer_key, memory_evidence
from casework.runtime.runconfig import RunConfig

__all__ = [
    "MIN_EXAMPLES",
    "MIN_SUPPORT",
    "VOTE_NEIGHBOURS",
    "VOTE_POWER",
    "VOTE_SOURCE",
    "VOTE_THRESHOLD",
    "Calibration",
    "Vote",
    "calibrate",
    "calibration_of",
    "vote",
    "vote_layer",
]

DecisionT = TypeVar("DecisionT", bound=Decision)

VOTE_SOURCE = "memory-vote"
"""The layer's name in a cascade (a memory layer: its examples are ``memory`` evidence)."""
VOTE_NEIGHBOURS = 7
"""How many nearest examples vote."""
VOTE_POWER = 4.0
"""A vote weighs ``similarity ** VOTE_POWER``: at 0.8 an example counts 0.41, at 0.5 0.06."""
VOTE_THRESHOLD = 95.0
"""The layer's threshold until a cascade policy is fitted: the caller's own examples were
right at least 95 % of the time at this vote strength (leave-one-out)."""
MIN_EXAMPLES = 20
"""Fewer verified examples than this: the vote is never sure."""
MIN_SUPPORT = 10
"""Leave-one-out votes needed at a strength before its accuracy is believed."""
_CACHE_SIZE = 16


@dataclass(frozen=True)
class Vote:
    """What the ``k`` nearest examples say of one case."""

    answer: str | None
    """The winning answer's key (``answer_key``); None: no example voted."""
    strength: float
    """The winning answer's share of the vote's weight, 0-1."""
    voters: list[int]
    """Indices (into the examples given) of the voters for the answer, nearest first."""


def vote(
    similarities: Sequence[float] | np.ndarray,
    answers: Sequence[str],
    *,
    k: int = VOTE_NEIGHBOURS,
    power: float = VOTE_POWER,
) -> Vote:
    """The answer the ``k`` most similar examples vote for (``similarities[i]`` and
    ``answers[i]``: example ``i``'s cosine to the case and its answer key), each weighing
    ``max(similarity, 0) ** power``. Ties in weight go to the answer of the nearer example."""
    sims = np.asarray(similarities, dtype=np.float64)
    if sims.size == 0 or k <= 0:
        return Vote(None, 0.0, [])
    order = np.argsort(-sims, kind="stable")[:k]
    weights: dict[str, float] = {}
    for i in order:  # nearest first: on equal weight the nearer answer was seen first
        weights[answers[i]] = weights.get(answers[i], 0.0) + max(float(sims[i]), 0.0) ** power
    total = sum(weights.values())
    if total <= 0.0:
        return Vote(None, 0.0, [])
    best = max(weights, key=lambda a: weights[a])
    voters = [int(i) for i in order if answers[i] == best]
    return Vote(best, round(weights[best] / total, 6), voters)


@dataclass(frozen=True)
class Calibration:
    """Leave-one-out on a memory's examples: how often the vote of the others was right, by
    its strength."""

    examples: int
    votes: tuple[tuple[float, bool], ...]
    """``(strength, right)`` per example, strongest first."""
    min_examples: int = MIN_EXAMPLES
    min_support: int = MIN_SUPPORT

    def confidence(self, strength: float) -> float:
        """0-100: the leave-one-out accuracy of the ``min_support`` votes nearest in strength
        to ``strength`` (the stronger first on a tie in distance); 0 with too few examples."""
        if self.examples < self.min_examples or len(self.votes) < self.min_support:
            return 0.0
        near = sorted(self.votes, key=lambda v: (abs(v[0] - strength), -v[0]))
        kept = near[: self.min_support]
        return round(100.0 * sum(right for _, right in kept) / len(kept), 2)

    def table(self) -> list[tuple[float, int, float]]:
        """``(strength, votes at least that strong, their accuracy)`` at each distinct
        strength, strongest first."""
        rows = []
        right = 0
        for n, (s, ok) in enumerate(self.votes, start=1):
            right += ok
            if n == len(self.votes) or self.votes[n][0] < s:
                rows.append((s, n, round(right / n, 4)))
        return rows


def calibrate(
    vectors: np.ndarray,
    answers: Sequence[str],
    *,
    k: int = VOTE_NEIGHBOURS,
    power: float = VOTE_POWER,
    min_examples: int = MIN_EXAMPLES,
    min_support: int = MIN_SUPPORT,
) -> Calibration:
    """Leave-one-out: each example (a row of ``vectors``, normalised, with ``answers[i]``)
    classified by the vote of all the others. One matrix product: at a few thousand
    examples, well under a second."""
    n = len(answers)
    if n < 2:
        return Calibration(n, (), min_examples, min_support)
    matrix = np.asarray(vectors, dtype=np.float64)
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -np.inf)  # an example does not vote for itself
    nearest = np.argsort(-sims, axis=1, kind="stable")[:, : min(k, n - 1)]
    out = []
    for i in range(n):
        top = nearest[i]
        found = vote(sims[i, top], [answers[j] for j in top], k=k, power=power)
        out.append((found.strength, found.answer == answers[i]))
    out.sort(key=lambda t: -t[0])
    return Calibration(n, tuple(out), min_examples, min_support)


_CACHE: OrderedDict[str, Calibration] = OrderedDict()


def _version(examples: Sequence[Example], k: int, power: float) -> str:
    """The memory's version as the calibration sees it: which examples, with which answers."""
    digest = hashlib.sha256(f"{k}:{power}".encode())
    for e in examples:
        digest.update(f"|{e.id}:{e.key_text}:{answer_key(e.answer)}".encode())
    return digest.hexdigest()


def calibration_of(
    examples: Sequence[Example], *, k: int = VOTE_NEIGHBOURS, power: float = VOTE_POWER
) -> Calibration:
    """``calibrate`` on stored examples, cached per memory version: the next case with the
    same examples reuses it; an added or deleted example makes a new one."""
    key = _version(examples, k, power)
    found = _CACHE.get(key)
    if found is not None:
        _CACHE.move_to_end(key)
        return found
    vectors = np.array([e.embedding for e in examples], dtype=np.float64)
    made = calibrate(vectors, [answer_key(e.answer) for e in examples], k=k, power=power)
    _CACHE[key] = made
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return made


def vote_layer(
    memory_of: Callable[[Any, RunConfig], Memory],
    key_text: Callable[[Any], str],
    decide: Callable[[dict[str, Any] | None, float, str], DecisionT],
    *,
    k: int = VOTE_NEIGHBOURS,
    power: float = VOTE_POWER,
) -> Callable[[Any, Any, RunConfig], DecisionT]:
    """A strategy ``run(input, deps, config)`` answering with the calibrated vote of the
    caller's verified examples: ``decide(answer, confidence, reasoning)`` builds the app's
    decision (``answer`` None: the vote cannot be sure yet, the app's undecided answer); the
    decision cites the examples that voted for its answer as ``memory`` evidence."""

    def run(input: Any, deps: Any, config: RunConfig) -> DecisionT:
        memory = memory_of(deps, config)
        count = memory.count()
        if count < MIN_EXAMPLES:  # never sure yet: no embedding, no calibration
            decision = decide(
                None, 0.0, f"{count} verified example(s); the vote needs {MIN_EXAMPLES}."
            )
        else:
            decision = _decided(memory, count, key_text(input), decide, k, power)
        decision.run = RunInfo(ended_by=EndReason.RULES, strategy=VOTE_SOURCE)
        return decision

    run.__name__ = VOTE_SOURCE.replace("-", "_")
    return run


def _decided(
    memory: Memory,
    count: int,
    text: str,
    decide: Callable[[dict[str, Any] | None, float, str], DecisionT],
    k: int,
    power: float,
) -> DecisionT:
    examples = memory.list(limit=count)
    calibration = calibration_of(examples, k=k, power=power)
    near = memory.nearest(text, k)
    found = vote([s for _, s in near], [answer_key(e.answer) for e, _ in near], k=k, power=power)
    if found.answer is None:
        return decide(None, 0.0, "No verified example voted.")
    used = [near[i] for i in found.voters]
    confidence = calibration.confidence(found.strength)
    decision = decide(
        dict(used[0][0].answer),
        confidence,
        f"{len(used)} of the {len(near)} nearest verified examples "
        f"({', '.join(str(e.id) for e, _ in used)}) vote for it, strength "
        f"{found.strength:.2f}; votes of about that strength were right {confidence:g} % of "
        f"the time on the caller's {calibration.examples} examples (leave-one-out).",
    )
    decision.evidence = [*memory_evidence(used), *decision.evidence]
    return decision
