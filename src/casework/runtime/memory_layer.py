"""The memory's two uses in a cascade: a layer that answers from verified examples, and the
examples shown to a model layer as demonstrations.

**The memory layer** (``memory_layer``) goes first: it finds the examples nearest the case's
key text (``Memory.nearest``) and, when they are near enough, answers with their verified
answer. Its confidence (``recall_confidence``) is what the cascade's threshold acts on; the
threshold is fitted like every other layer's (``casework.runtime.cascade_fit.fit_policy``: the
layer is a ``Layer`` named ``memory``, calibrated on an evaluation's outcomes), and
``MEMORY_THRESHOLD`` holds until a fit exists. A decision it gives cites each example it used
as an ``Evidence`` of source ``memory`` (``examples_used`` reads them back); with no example of
the app yet it answers "undecided" at once (no embedding is computed).

**Few examples near a case make it less sure.** The confidence depends on the similarity of
the nearest agreeing example AND on how many near examples (similarity at least
``NEAR_SIMILARITY``) agree: the distance costs confidence, more when few examples support the
answer (``1 + SUPPORT_PRIOR / agreeing``), and the answer keeps only its share of the near
votes (``recall_confidence``). At similarity 0.92 one example gives 84, two 88, four 90 (the
threshold); an exact repeat gives 100. So early in a stream of reviewed cases, when each kind
of case has one example or none, the layer passes near cases on (to the next layer or a
person), and answers the same cases later, once reviewers have verified several like them.

**Demonstrations** (``demonstrations``) are the ``k`` most similar examples, for a model
layer's prompt (kNN demonstration selection, Liu et al. 2022): the answer space stays the
grammar's; the examples show the tenant's conventions.

**A case far from every verified example makes the other layers less sure**
(``novelty_confidence``): once a tenant has verified examples of an app, a rules or model
layer's confidence is scaled down by how far the case is from the nearest of them, so early
novel cases reach a person (and become examples) while later cases like them do not. A
tenant with no example keeps every layer's confidence as it is.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from casework.runtime.decision import Decision, EndReason, Evidence, RunInfo
from casework.runtime.memory import Example, Memory
from casework.runtime.runconfig import RunConfig

__all__ = [
    "FAR_SIMILARITY",
    "MEMORY_SOURCE",
    "MEMORY_THRESHOLD",
    "NEAR_SIMILARITY",
    "NOVELTY_FLOOR",
    "Demonstration",
    "Recall",
    "answer_key",
    "demonstration_evidence",
    "demonstrations",
    "examples_used",
    "memory_evidence",
    "memory_layer",
    "nearest_similarity",
    "novelty_confidence",
    "recall",
    "recall_confidence",
]

DecisionT = TypeVar("DecisionT", bound=Decision)

MEMORY_SOURCE = "memory"
"""The evidence source of an example a decision used."""
MEMORY_THRESHOLD = 90.0
"""The memory layer's threshold until a cascade policy is fitted: one example at similarity
0.95, or several agreeing ones at about 0.93 (see ``recall_confidence``)."""
NEAR_SIMILARITY = 0.75
"""An example at least this similar (cosine) to the case counts as near: it votes."""
NEIGHBOURS = 5
"""How many nearest examples the layer looks at."""
SUPPORT_PRIOR = 1.0
"""How much a lone example's distance counts extra (see ``recall_confidence``)."""
VOTE_TEMPERATURE = 0.05
"""Votes weigh ``exp((similarity - 1) / T)``: an exact repeat outweighs many loose ones."""


def recall_confidence(similarity: float, agreeing: int, agreement: float) -> float:
    """0-100: how sure the memory is of an answer given by ``agreeing`` near examples, the
    nearest of them at ``similarity``, holding ``agreement`` (0-1) of the near votes.

    ``100 * agreement * (1 - (1 - similarity) * (1 + SUPPORT_PRIOR / agreeing))``, at least 0.
    The distance to the nearest example costs confidence, and costs more when few examples
    support the answer: one example at similarity 0.90 gives 80, four agreeing ones 87.5,
    and an exact repeat (1.0) gives 100 however many. Early in a stream, with few examples,
    near cases therefore stay below the threshold and reach the next layer or a person more
    often than the same cases later."""
    if agreeing <= 0:
        return 0.0
    sure = 1.0 - (1.0 - similarity) * (1.0 + SUPPORT_PRIOR / agreeing)
    return round(max(0.0, min(100.0, 100.0 * agreement * sure)), 2)


@dataclass(frozen=True)
class Recall:
    """What the memory says of one case."""

    answer: dict[str, Any] | None
    """The verified answer the near examples vote for; None: no example is near."""
    confidence: float
    used: list[tuple[Example, float]]
    """The near examples that gave the answer, with their similarity, nearest first."""
    neighbours: list[tuple[Example, float]]
    """Every example looked at (near or not)."""


def answer_key(answer: dict[str, Any]) -> str:
    """An answer as the text votes compare (key order does not matter)."""
    return json.dumps(answer, sort_keys=True, ensure_ascii=False)


def recall(
    memory: Memory, text: str, *, k: int = NEIGHBOURS, near: float = NEAR_SIMILARITY
) -> Recall:
    """The answer the ``k`` nearest examples of ``text`` vote for (votes weighted by
    similarity, sharply: ``VOTE_TEMPERATURE``), and how sure the memory is of it."""
    neighbours = memory.nearest(text, k)
    close = [(e, s) for e, s in neighbours if s >= near]
    if not close:
        return Recall(None, 0.0, [], neighbours)
    votes: dict[str, float] = {}
    for example, sim in close:
        key = answer_key(example.answer)
        votes[key] = votes.get(key, 0.0) + math.exp((sim - 1.0) / VOTE_TEMPERATURE)
    best = max(votes, key=lambda key: votes[key])
    used = [(e, s) for e, s in close if answer_key(e.answer) == best]
    confidence = recall_confidence(used[0][1], len(used), votes[best] / sum(votes.values()))
    return Recall(dict(used[0][0].answer), confidence, used, neighbours)


def memory_evidence(used: Sequence[tuple[Example, float]]) -> list[Evidence]:
    """One evidence item per example used: its id, who verified it, its similarity."""
    return [
        Evidence(
            source=MEMORY_SOURCE,
            ref=f"example:{e.id}",
            summary=f"Verified by {e.verified_by} ({e.source}): {e.key_text[:200]}"[:400],
            fields={"example_id": e.id, "similarity": sim, "answer": e.answer},
        )
        for e, sim in used
    ]


def examples_used(decision: Decision) -> list[int]:
    """The ids of the examples a decision used (answered from, or shown to its model)."""
    return [
        int(e.fields["example_id"])
        for e in decision.evidence
        if e.source == MEMORY_SOURCE and "example_id" in e.fields
    ]


def memory_layer(
    memory_of: Callable[[Any, RunConfig], Memory],
    key_text: Callable[[Any], str],
    decide: Callable[[dict[str, Any] | None, float, str], DecisionT],
    *,
    k: int = NEIGHBOURS,
    near: float = NEAR_SIMILARITY,
) -> Callable[[Any, Any, RunConfig], DecisionT]:
    """A strategy ``run(input, deps, config)`` answering from the memory: ``decide(answer,
    confidence, reasoning)`` builds the app's decision (``answer`` None: no example is near,
    the app's undecided answer); the layer adds the examples it used as evidence."""

    def run(input: Any, deps: Any, config: RunConfig) -> DecisionT:
        memory = memory_of(deps, config)
        if memory.count() == 0:  # nothing verified yet: no embedding, no model load
            decision = decide(None, 0.0, "No verified example yet.")
            decision.run = RunInfo(ended_by=EndReason.RULES, strategy=MEMORY_SOURCE)
            return decision
        found = recall(memory, key_text(input), k=k, near=near)
        if found.answer is None:
            nearest = found.neighbours[0][1] if found.neighbours else None
            said = f" (the nearest at {nearest:.2f})" if nearest is not None else ""
            decision = decide(None, 0.0, f"No verified example is near{said}.")
        else:
            ids = ", ".join(str(e.id) for e, _ in found.used)
            decision = decide(
                found.answer,
                found.confidence,
                f"Answered from {len(found.used)} verified example(s) ({ids}); the nearest "
                f"at similarity {found.used[0][1]:.2f}.",
            )
            decision.evidence = [*memory_evidence(found.used), *decision.evidence]
        decision.run = RunInfo(ended_by=EndReason.RULES, strategy=MEMORY_SOURCE)
        return decision

    run.__name__ = MEMORY_SOURCE
    return run


@dataclass(frozen=True)
class Demonstration:
    """One verified example as a model layer's prompt shows it."""

    example_id: int
    key_text: str
    answer: dict[str, Any]
    similarity: float


def demonstrations(memory: Memory, text: str, k: int = 4) -> list[Demonstration]:
    """The ``k`` examples most similar to ``text``, most similar first, for a model layer's
    prompt (an app renders them as turns before the case). A memory with no example of the
    app costs one count and no embedding."""
    if k <= 0 or memory.count() == 0:
        return []
    return [
        Demonstration(e.id, e.key_text, dict(e.answer), sim) for e, sim in memory.nearest(text, k)
    ]


def demonstration_evidence(shown: Sequence[Demonstration]) -> list[Evidence]:
    """One evidence item per example shown to a model layer (``examples_used`` reads them)."""
    return [
        Evidence(
            source=MEMORY_SOURCE,
            ref=f"example:{d.example_id}",
            summary=f"Shown to the model as a demonstration: {d.key_text[:200]}"[:400],
            fields={"example_id": d.example_id, "similarity": d.similarity, "shown": True},
        )
        for d in shown
    ]


@dataclass(frozen=True)
class ThresholdRow:
    """How the memory layer does at one threshold on measured cases."""

    threshold: float
    answered: int
    """Cases whose memory confidence reached the threshold (the layer would answer them)."""
    right: int
    """Of those, the ones whose remembered answer was right."""
    cases: int

    @property
    def answered_share(self) -> float:
        return self.answered / self.cases if self.cases else 0.0

    @property
    def precision(self) -> float | None:
        """Right when it answers; None when it answers nothing."""
        return self.right / self.answered if self.answered else None


def threshold_table(
    outcomes: Sequence[tuple[float, bool]], thresholds: Sequence[float]
) -> list[ThresholdRow]:
    """Per threshold, how often the memory layer answers and how often it is right, from
    ``(confidence, right)`` per measured case (``right``: the remembered answer matched the
    case's gold answer; a case with no near example has confidence 0)."""
    rows = []
    for t in thresholds:
        kept = [right for confidence, right in outcomes if confidence > 0 and confidence >= t]
        rows.append(ThresholdRow(t, len(kept), sum(kept), len(outcomes)))
    return rows


def lowest_threshold(rows: Sequence[ThresholdRow], target: float = 0.95) -> ThresholdRow | None:
    """The row with the lowest threshold at which the layer is right at least ``target`` of
    the time it answers, at that threshold and every higher one (None: no such threshold)."""
    ordered = sorted(rows, key=lambda r: r.threshold)
    for i, row in enumerate(ordered):
        rest = [r.precision for r in ordered[i:] if r.precision is not None]
        if row.answered and all(p >= target for p in rest):
            return row
    return None


def threshold_report(rows: Sequence[ThresholdRow], target: float = 0.95) -> str:
    """The table as a README's markdown, with the lowest threshold right ``target`` of the time
    (what an app's threshold sweep prints)."""
    lines = ["| threshold | answered | right when answered |", "|---|---|---|"]
    for t in rows:
        share = f"{t.precision:.3f}" if t.precision is not None else "-"
        lines.append(
            f"| {t.threshold:g} | {t.answered} ({t.answered_share:.1%}) "
            f"| {t.right}/{t.answered} = {share} |"
        )
    best = lowest_threshold(rows, target)
    lines.append(
        f"lowest threshold right >= {target * 100:g} % of the time: {best.threshold:g}"
        if best
        else "none"
    )
    return "\n".join(lines)


FAR_SIMILARITY = 0.25
"""A case whose nearest verified example is this similar or less is unlike all of them: a
non-memory layer keeps ``NOVELTY_FLOOR`` of its confidence (see ``novelty_confidence``)."""
NOVELTY_FLOOR = 0.5
"""The share of its confidence a layer keeps on a case unlike every verified example."""


def nearest_similarity(memory: Memory, text: str) -> float | None:
    """The similarity of ``text``'s nearest verified example; None when the memory has no
    example of the app (one count, no embedding): what ``novelty_confidence`` takes."""
    if memory.count() == 0:
        return None
    found = memory.nearest(text, 1)
    return found[0][1] if found else None


def novelty_confidence(
    confidence: float,
    nearest: float | None,
    *,
    near: float = NEAR_SIMILARITY,
    far: float = FAR_SIMILARITY,
    floor: float = NOVELTY_FLOOR,
) -> float:
    """A non-memory layer's ``confidence`` (0-100) on a case whose nearest verified example is
    at cosine similarity ``nearest``; None: the tenant has no example of the app, and the
    confidence is returned as it is (a tenant without examples behaves as before).

    A case at least ``near`` to an example keeps its confidence; below that the confidence is
    scaled linearly down to ``floor`` of itself at ``far`` and below:
    ``confidence * (floor + (1 - floor) * clamp((nearest - far) / (near - far), 0, 1))``.
    With the defaults (near 0.75, far 0.25, floor 0.5) a valid model answer at 60 keeps 60 at
    0.75, 54 at 0.5 and 30 at 0.25 or below; so while examples are few, most cases are far and
    reach a person, and once reviewers have verified cases like them, they are decided. Use
    it on every layer but the memory itself (whose confidence already says how near)."""
    if nearest is None or near <= far:
        return confidence
    closeness = min(1.0, max(0.0, (nearest - far) / (near - far)))
    return round(confidence * (floor + (1.0 - floor) * closeness), 2)
