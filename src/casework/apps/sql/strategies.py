"""Strategies: ``run(question, deps, config) -> SQLDecision``, one per compared agent. The question
is a string, or a ``SQLQuestion`` naming the database it is asked of (benchmark cases).

- ``rules``: no model; screening refusals, otherwise the tables a person would start from
  (NEEDS_REVIEW, no SQL): the floor every agent must beat.
- ``keyword`` / ``semantic``: single pass with that retrieval mode.
- ``v1``: ReAct with retrieval and structural validation.
- ``v2``: ``v1`` plus the separate judge and the combined confidence (the spec's agent).
- ``consistency``: execution-guided self-consistency (``consistency.py``): up to three
  candidates, the majority on their result rows, the agreement as the confidence.
- ``cascade`` (the default): the screen's refusals, then self-consistency on the bundled
  model (``models.local``), then, when a remote model is configured (``--model``), ``v2`` on
  it; the first layer sure of its verdict decides, else the best answer goes to a person.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal

from casework.apps.sql.agent import (
    ask_once,
    ended,
    finalize,
    refusal_response,
    refused,
    run_react,
    run_single_pass,
    screen,
    single_pass_prompt,
    start_run,
)
from casework.apps.sql.consistency import MISSING_KINDS, SAMPLES, TEMPERATURE, Candidate, vote
from casework.apps.sql.database import execute_read_only
from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.models import (
    ROLES,
    AgentStateV2,
    SQLDecision,
    SQLQueryResponse,
    SQLQuestion,
    SubmitAnswer,
)
from casework.apps.sql.retrieval import retrieve_tables
from casework.apps.sql.tools import validate
from casework.errors import CaseworkError
from casework.llm.local import is_local_model
from casework.llm.roles import LOCAL_ROLE
from casework.runtime import EndReason, Evidence, RunConfig, RunInfo, RunResult, Strategy
from casework.runtime.cascade import Cascade, Layer, LayerOutcome
from casework.runtime.decision import ToolCallRecord
from casework.runtime.usage import Usage

__all__ = [
    "STRATEGIES",
    "cascade",
    "decision_from_response",
    "run_consistency",
    "run_keyword",
    "run_rules",
    "run_semantic",
    "run_v1",
    "run_v2",
]


def decision_from_response(
    response: SQLQueryResponse, run: RunResult[Any] | None = None
) -> SQLDecision:
    """The platform decision of a response; with the harness's ``run`` behind it, its ids,
    trace and usage (every model call of the run, the judge's included, counted once)."""
    verdict: Literal["ANSWERED", "REFUSED", "NEEDS_REVIEW"]
    if response.refused:
        verdict = "REFUSED"
    elif response.query and response.valid:
        verdict = "ANSWERED"
    else:
        verdict = "NEEDS_REVIEW"
    evidence = [
        Evidence(source="retrieve_tables", ref=t, summary=f"table {t} used by the query")
        for t in response.tables_used
    ]
    if response.query:
        evidence.append(
            Evidence(
                source="validate_sql",
                ref=response.query[:200],
                summary="passed structural validation"
                if response.valid
                else "failed structural validation",
                fields={"errors": [e.message for e in response.validation_errors]},
            )
        )
    if response.judge_score is not None:
        evidence.append(
            Evidence(
                source="llm_judge_evaluate",
                ref=response.judge_model or "judge",
                summary=f"judge score {response.judge_score}",
            )
        )
    usage = (
        run.usage
        if run is not None
        else Usage(  # no harness run behind it: what the response reports
            model_calls=response.model_calls + response.judge_calls,
            tool_calls=sum(1 for s in response.reasoning_steps if s.get("kind") in TOOL_STEPS),
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            wall_seconds=response.seconds,
            cost_usd=response.cost_usd,
        )
    )
    info = RunInfo(
        ended_by=response.ended_by,
        detail=response.end_detail,
        strategy=response.strategy,
        model=response.model,
        run_id=run.run_id if run is not None else "",
        thread_id=run.thread_id if run is not None else "",
        tool_calls=_tool_calls(response),
        usage=usage,
        trace_path=run.trace_path if run is not None else None,
    )
    return SQLDecision(
        verdict=verdict,
        confidence=round(response.confidence * 100, 2),
        reasoning=response.explanation[:1200],
        evidence=evidence,
        response=response,
        run=info,
    )


TOOL_STEPS = ("retrieve_tables", "validate_sql", "llm_judge_evaluate", "execute_sql")
"""Kinds of reasoning step that are tool calls (the others: screen, final)."""


def _tool_calls(response: SQLQueryResponse) -> list[ToolCallRecord]:
    """The response's tool steps as the harness's trajectory (its path and redundancy
    metrics read these)."""
    calls: list[ToolCallRecord] = []
    for step in response.reasoning_steps:
        kind = step.get("kind")
        if kind not in TOOL_STEPS:
            continue
        args: dict[str, Any] = {k: step[k] for k in ("question", "query", "mode") if k in step}
        calls.append(
            ToolCallRecord(
                name=str(kind),
                args=args,
                id=str(step.get("step", len(calls) + 1)),
                ok="error" not in step,
                output=json.dumps(step, default=str)[:2000],
            )
        )
    return calls


Question = str | SQLQuestion


def _decided(result: RunResult[SQLQueryResponse]) -> SQLDecision:
    assert result.decision is not None  # every sql run ends with a response
    return decision_from_response(result.decision, result)


def _on(question: Question, deps: SQLDeps) -> tuple[str, SQLDeps]:
    if isinstance(question, str):
        return question, deps
    return question.question, deps.on_database(question.db_url) if question.db_url else deps


def run_rules(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    refusal = screen(deps, question)
    if refusal is not None:
        return decision_from_response(
            refusal_response(question, refusal.reason, strategy="rules", kind=refusal.kind)
        )
    state = AgentStateV2(question=question)
    tables = retrieve_tables(deps.schema, question, deps.config.top_k, mode="keyword")
    state.step("retrieve_tables", mode="keyword", tables=[(t.table, t.score) for t in tables])
    response = SQLQueryResponse(
        question=question,
        query=None,
        explanation="No model: a person should write the query, starting from these tables: "
        + (", ".join(t.table for t in tables) or "none match"),
        confidence=0.0,
        confidence_source="no_answer",
        tables_used=[t.table for t in tables],
        reasoning_steps=state.reasoning_trace,
        strategy="rules",
        ended_by=EndReason.RULES,
    )
    return decision_from_response(response)


def run_keyword(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_single_pass(deps, config, question, "keyword"))


def run_semantic(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_single_pass(deps, config, question, "semantic"))


def run_v1(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_react(deps, config, question, use_judge=False))


def run_v2(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_react(deps, config, question, use_judge=True))


def run_consistency(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    question, deps = _on(question, deps)
    return _decided(run_self_consistent(deps, config, question))


# -- the cascade -------------------------------------------------------------------------

CONSISTENCY_THRESHOLD = 60.0
"""Until a policy is fitted: two of three candidates agreeing decide."""


def _screen_layer(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    """The screen: a refusal it is sure of (policy, not a guess); anything else passes on."""
    decided = run_rules(question, deps, config)
    if decided.verdict == "REFUSED":
        decided.confidence = 100.0  # sure of the verdict; the answer's own confidence stays 0
    return decided


def _agreement(decided: SQLDecision) -> float:
    """The share of candidates that agreed with the verdict (0-100), from the vote step."""
    vote = next((s for s in decided.response.reasoning_steps if s.get("kind") == "vote"), None)
    if not vote or not vote.get("asked"):
        return 0.0
    return round(100.0 * vote.get("agreeing", 0) / SAMPLES, 2)


def _local_consistency(question: Question, deps: SQLDeps, config: RunConfig) -> SQLDecision:
    """Self-consistency on the bundled (``local``) model; the decision's confidence is the
    candidates' agreement on its verdict (a refusal's answer confidence stays capped)."""
    on_local = replace(config, models=config.models.routed({ROLES["agent"]: LOCAL_ROLE}))
    decided = run_consistency(question, deps, on_local)
    decided.confidence = _agreement(decided)
    return decided


def _no_answer(said: str, outcomes: list[LayerOutcome]) -> SQLDecision:
    """No layer answered at all: an empty answer goes to a person."""
    question = outcomes[0].output.get("response", {}).get("question", "") if outcomes else ""
    response = SQLQueryResponse(
        question=question,
        query=None,
        explanation=f"No layer could answer: {said}."[:1200],
        confidence=0.0,
        confidence_source="no_answer",
        strategy="cascade",
        ended_by=EndReason.NO_DECISION,
    )
    return decision_from_response(response)


cascade: Cascade[SQLDecision] = Cascade(
    "sql",
    [
        Layer("rules", _screen_layer, default_threshold=100.0),
        Layer("consistency", _local_consistency, default_threshold=CONSISTENCY_THRESHOLD),
        Layer("agent", run_v2, default_threshold=CONSISTENCY_THRESHOLD, remote=True),
    ],
    decision=SQLDecision,
    role=ROLES["agent"],
    no_answer=_no_answer,
)


STRATEGIES: dict[str, Strategy[Question, SQLDeps]] = {
    "rules": run_rules,
    "keyword": run_keyword,
    "semantic": run_semantic,
    "v1": run_v1,
    "v2": run_v2,
    "consistency": run_consistency,
    "cascade": cascade,
}


# Execution-guided self-consistency (the `consistency` strategy's run): the candidates and
# the vote are consistency.py's.


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
        candidates.append(_candidate(deps, state, answer))
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
    if winner is not None and response.query:  # a refusal keeps its capped confidence
        response.confidence = round(size / samples, 4)
        response.confidence_source = "consistency"
    response.model = run.model
    return ended(run, response)
