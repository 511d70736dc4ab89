"""Execution-guided self-consistency: several candidate queries for one prompt, each validated
and executed read-only, and the majority on their result rows.

The first candidate is the greedy single pass; the others are sampled. Candidates that give
the same rows (as a multiset, columns in any order) are one vote; the answer is the query of
the largest group (a tie goes to the group holding the greedy candidate) and its confidence
is the group's share of the candidates asked. Sampling stops as soon as a group holds a
majority of ``samples``: two agreeing answers out of three need no third. A small model's
single pass is often right and rarely sure; agreement between independent tries is the
confidence the cascade can calibrate (SLM-SQL, CHESS and others report +2–4 points for
1.5B models on Spider and BIRD with it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from casework.apps.sql.agent import (
    ask_once,
    ended,
    finalize,
    refusal_response,
    refused,
    screen,
    single_pass_prompt,
    start_run,
)
from casework.apps.sql.database import execute_read_only
from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.metrics import result_sets_equal
from casework.apps.sql.models import ROLES, AgentStateV2, SQLQueryResponse, SubmitAnswer
from casework.apps.sql.tools import validate
from casework.errors import CaseworkError
from casework.llm.local import is_local_model
from casework.runtime import EndReason, RunResult
from casework.runtime.runconfig import RunConfig

__all__ = ["SAMPLES", "TEMPERATURE", "Candidate", "run_self_consistent", "vote"]

SAMPLES = 3
"""Candidates asked at most (the greedy one included)."""
TEMPERATURE = 0.7
"""Sampling temperature of the candidates after the first."""
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


def _run(deps: SQLDeps, state: AgentStateV2, answer: SubmitAnswer | None) -> Candidate:
    """Validate (counted in the trace) and execute one candidate read-only."""
    candidate = Candidate(answer)
    if answer is None or not answer.query.strip():
        candidate.error = "no query"
        return candidate
    checked = validate(deps, state, answer.query)
    result = state.validation_results[-1] if state.validation_results else None
    if not checked.get("valid") or result is None or result.transpiled is None or not deps.db_url:
        candidate.error = "not valid" if deps.db_url else "no database to run on"
        errors = result.errors if result is not None else []
        if errors and all(e.kind in MISSING_KINDS for e in errors):
            candidate.missing = [e.message for e in errors]
        return candidate
    try:
        executed = execute_read_only(
            deps.db_url,
            result.transpiled,
            max_rows=deps.config.max_rows,
            timeout_seconds=deps.config.timeout_seconds,
        )
    except CaseworkError as exc:
        candidate.error = str(exc)
        return candidate
    candidate.rows = executed.rows
    return candidate


def run_self_consistent(
    deps: SQLDeps,
    config: RunConfig,
    question: str,
    mode: Literal["keyword", "semantic"] = "keyword",
    *,
    samples: int = SAMPLES,
) -> RunResult[SQLQueryResponse]:
    """Up to ``samples`` candidates, the majority on their rows (see the module), in one
    run of the harness (every candidate's call in its usage and trace)."""
    refusal = screen(deps, question)
    if refusal is not None:
        return refused(config, question, refusal, strategy="consistency")
    state = AgentStateV2(question=question)
    deps = deps.with_config(
        max_validation_attempts=max(samples, deps.config.max_validation_attempts)
    )
    model, bound, messages = single_pass_prompt(deps, config, state, question, mode)
    run = start_run(config, question, strategy="consistency", role=ROLES["agent"])
    local = is_local_model(model)
    majority = samples // 2 + 1
    candidates: list[Candidate] = []
    endings: list[tuple[EndReason, str]] = []
    winner, size = None, 0
    for i in range(samples):
        sampling: dict[str, Any] = {} if i == 0 else {"temperature": TEMPERATURE}
        if i and local:
            sampling["seed"] = 1000 + i  # distinct, reproducible samples
        answer, ended_by, detail = ask_once(run, bound, messages, **sampling)
        endings.append((ended_by, detail))
        candidates.append(_run(deps, state, answer))
        winner, size = vote(candidates)
        if size >= majority:
            break
    # every try reached for tables or columns the database does not have: unanswerable
    unanswerable = (
        winner is None and len(candidates) == samples and all(c.missing for c in candidates)
    )
    state.step(
        "vote",
        candidates=[
            {
                "query": c.answer.query if c.answer else None,
                "ran": c.rows is not None,
                "error": c.error,
            }
            for c in candidates
        ],
        winner="unanswerable" if unanswerable else winner,
        agreeing=len(candidates) if unanswerable else size,
        asked=len(candidates),
    )
    if unanswerable:
        lacking = "; ".join(dict.fromkeys(m for c in candidates for m in c.missing))
        response = refusal_response(
            question,
            f"The database does not hold what the question asks for ({lacking})"[:600] + ".",
            strategy="consistency",
            kind="unanswerable",
        )
        response.reasoning_steps = [
            *state.reasoning_trace,
            {"kind": "final", "outcome": "refused", "refusal": "unanswerable"},
        ]
        response.ended_by = EndReason.SUBMIT
        response.model = run.model
        return ended(run, response)
    chosen = candidates[winner].answer if winner is not None else candidates[0].answer
    ended_by, detail = endings[winner if winner is not None else 0]
    response = finalize(
        state,
        chosen,
        deps,
        strategy="consistency",
        use_judge=False,
        ended_by=ended_by,
        detail=detail,
    )
    if winner is not None and response.query:  # a refusal keeps its capped confidence
        response.confidence = round(size / samples, 4)
        response.confidence_source = "consistency"
    response.model = run.model
    return ended(run, response)
