"""Execution-guided self-consistency, the ``consistency`` strategy's run: the greedy candidate
alone when it settles, else up to ``SAMPLES`` candidates validated and executed read-only and
the majority on their rows (the candidates and the vote are ``consistency.py``'s plain
functions); a refusal naming what is missing when every try reached for tables or columns the
database lacks."""

from __future__ import annotations

from collections.abc import Sequence
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
from casework.apps.sql.consistency import (
    GREEDY_CONFIDENCE,
    MISSING_KINDS,
    SAMPLES,
    TEMPERATURE,
    Candidate,
    settled,
    vote,
)
from casework.apps.sql.database import execute_read_only
from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.models import ROLES, AgentStateV2, SQLQueryResponse, SubmitAnswer
from casework.apps.sql.tools import validate
from casework.errors import CaseworkError
from casework.llm.local import is_local_model
from casework.runtime import EndReason, RunConfig, RunResult

__all__ = ["run_self_consistent"]


def _candidate(deps: SQLDeps, state: AgentStateV2, answer: SubmitAnswer | None) -> Candidate:
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


def _unanswerable(
    question: str, state: AgentStateV2, candidates: list[Candidate], model: str | None
) -> SQLQueryResponse:
    """Every try reached for tables or columns the database does not have: a refusal naming
    what is missing."""
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
    response.model = model
    return response


def run_self_consistent(
    deps: SQLDeps,
    config: RunConfig,
    question: str,
    mode: Literal["keyword", "semantic"] = "keyword",
    *,
    samples: int = SAMPLES,
    shown: Sequence[tuple[str, str]] = (),
) -> RunResult[SQLQueryResponse]:
    """The greedy candidate alone when it settles (it runs and returns rows), else up to
    ``samples`` candidates and the majority on their rows (see ``consistency``), in one run of
    the harness (every candidate's call in its usage and trace); ``shown``: verified
    (question, query) pairs the prompt shows first."""
    refusal = screen(deps, question)
    if refusal is not None:
        return refused(config, question, refusal, strategy="consistency")
    state = AgentStateV2(question=question)
    deps = deps.with_config(
        max_validation_attempts=max(samples, deps.config.max_validation_attempts)
    )
    model, bound, messages = single_pass_prompt(deps, config, state, question, mode, shown)
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
        candidates.append(_candidate(deps, state, answer))
        winner, size = vote(candidates)
        if size >= majority or (i == 0 and settled(candidates[0])):
            break
    alone = len(candidates) == 1 and winner == 0
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
        alone=alone,
    )
    if unanswerable:
        return ended(run, _unanswerable(question, state, candidates, run.model))
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
    if alone and response.query:  # one candidate: how often such a one is right, no vote
        response.confidence = GREEDY_CONFIDENCE
        response.confidence_source = "greedy"
    elif winner is not None and response.query:  # a refusal keeps its capped confidence
        response.confidence = round(size / samples, 4)
        response.confidence_source = "consistency"
    response.model = run.model
    return ended(run, response)
