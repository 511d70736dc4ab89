"""Execution-guided self-consistency: several candidate queries for one prompt, each validated
and executed read-only, and the majority on their result rows.

The first candidate is the greedy single pass; the others are sampled, and only when it needs
them (adaptive): a greedy query that validates, runs and returns at least one row is the
answer alone, with no vote (``settled``); one that does not validate or run, refuses, or
returns no rows (a second cheap signal: Spider's gold results are almost never empty) asks
for the samples. Candidates that give the same rows (as a multiset, columns in any order) are
one vote; the answer is the query of the largest group (a tie goes to the group holding the
greedy candidate) and its confidence is the group's share of ``samples``, so a lone
candidate never claims the agreement of several. Sampling stops as soon as a group holds a
majority of ``samples``: two agreeing answers out of three need no third. A small model's
single pass is often right and rarely sure; agreement between independent tries is the
confidence the cascade can calibrate (SLM-SQL, CHESS and others report +2–4 points for
1.5B models on Spider and BIRD with it).

Here are the candidates and the vote; the run that asks for them is
``strategies.self_consistent.run_self_consistent``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from casework.apps.sql.metrics import result_sets_equal
from casework.apps.sql.models import SubmitAnswer

__all__ = [
    "GREEDY_CONFIDENCE",
    "MISSING_KINDS",
    "SAMPLES",
    "TEMPERATURE",
    "Candidate",
    "settled",
    "vote",
]

SAMPLES = 3
"""Candidates asked at most (the greedy one included)."""
TEMPERATURE = 0.7
"""Sampling temperature of the candidates after the first."""
GREEDY_CONFIDENCE = round(4 / 6, 4)
"""The confidence of a greedy candidate that settled alone: the share of such candidates that
were right on data the evaluation does not use (4 of the 6 scorable ones among the first 8
questions of MachineSpider's employee_hire_evaluation and course_teach, German; see the
README). It is the same as two agreeing of three, so the cascade's threshold (60) lets it
decide; it is no agreement, and the vote step says ``alone``."""
MISSING_KINDS = frozenset({"table", "column"})
"""Validation errors that say the schema lacks what the query asks for."""


@dataclass
class Candidate:
    """One candidate: its answer and, when it validated and ran, its rows."""

    answer: SubmitAnswer | None
    rows: list[list[Any]] | None = None
    error: str = ""
    missing: list[str] = field(default_factory=list)
    """What the query named that the schema does not have (its only validation errors)."""

    @property
    def refused(self) -> bool:
        """The model answered with no query: a refusal, which is a vote too."""
        return self.answer is not None and not self.answer.query.strip()

    def agrees(self, other: Candidate) -> bool:
        if self.refused or other.refused:
            return self.refused and other.refused
        if self.rows is None or other.rows is None:
            return False
        return result_sets_equal(self.rows, other.rows, ordered=False)


def settled(greedy: Candidate) -> bool:
    """The greedy candidate is the answer alone: it validated, ran and returned rows."""
    return bool(greedy.rows)


def vote(candidates: list[Candidate]) -> tuple[int | None, int]:
    """(index of the winning candidate, its group's size): groups of candidates with equal
    rows (refusals are one group); the largest wins, ties to the group with the earliest
    candidate (the greedy one). None when no candidate ran or refused."""
    groups: list[list[int]] = []
    for i, c in enumerate(candidates):
        if c.rows is None and not c.refused:
            continue
        for group in groups:
            if candidates[group[0]].agrees(c):
                group.append(i)
                break
        else:
            groups.append([i])
    if not groups:
        return None, 0
    best = max(groups, key=lambda g: (len(g), -g[0]))
    return best[0], len(best)
