"""The text-to-SQL agents on one base: screening, then a single pass (``keyword`` /
``semantic``) or the ReAct loop (``v1`` without the judge, ``v2`` with it), then one
deterministic ``finalize`` that validates the submitted query again, combines the
confidence and builds the ``SQLQueryResponse``.

The spec's Python entry point, ``SQLAgent``, lives in ``service.py`` (the faces' module).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import ValidationError

from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.judge import PROMPTS, SQLJudge
from casework.apps.sql.models import (
    ROLES,
    AgentStateV2,
    JudgeFeedback,
    SQLQueryResponse,
    SubmitAnswer,
    ValidationResult,
)
from casework.apps.sql.retrieval import describe_table, link_tables, schema_terms, tokenize
from casework.apps.sql.rules import (
    Refusal,
    combine_confidence,
    names_schema,
    normalize_sql,
    screen_question,
)
from casework.apps.sql.tools import (
    SQLRunContext,
    build_tools,
    latest_validation,
    retrieve,
    validate,
)
from casework.apps.sql.validation import validate_sql
from casework.errors import ModelError
from casework.runtime import EndReason, ReactAgent, Run, RunResult
from casework.runtime.prompts import load_prompt
from casework.runtime.runconfig import RunConfig

__all__ = [
    "LIMIT_OWN_CONFIDENCE",
    "SHORT_EXPLANATION",
    "SUBMIT",
    "WITHHELD_KINDS",
    "AgentKind",
    "ask_once",
    "build_react_agent",
    "ended",
    "finalize",
    "refusal_response",
    "refused",
    "run_react",
    "run_single_pass",
    "screen",
    "single_pass_prompt",
    "start_run",
    "submit_schema",
]

SUBMIT = "submit_answer"
SHORT_EXPLANATION = 160
"""Characters of explanation the one-shot prompt's tool allows: the query comes first in the
answer, so a shorter explanation leaves it unchanged and saves generated tokens (most of a
bundled-model call's time on 2 cores)."""


def submit_schema() -> dict[str, Any]:
    """The submit tool of the single pass and self-consistency: ``SubmitAnswer`` with the
    explanation held to ``SHORT_EXPLANATION`` by the schema (a grammar on the bundled model)."""
    schema = copy.deepcopy(SubmitAnswer.model_json_schema()) | {"title": SUBMIT}
    schema["properties"]["explanation"]["maxLength"] = SHORT_EXPLANATION
    return schema


WITHHELD_KINDS = frozenset({"read_only", "sensitive"})
"""Validation failures whose query is withheld from the answer (a refusal), not returned."""
LIMIT_OWN_CONFIDENCE = 0.5
"""Own confidence given to the best validated query when a run ends at a limit unsubmitted."""

AgentKind = Literal["keyword", "semantic", "v1", "v2"]


def refusal_response(question: str, reason: str, *, strategy: str, kind: str) -> SQLQueryResponse:
    return SQLQueryResponse(
        question=question,
        query=None,
        explanation=reason,
        confidence=0.0,
        confidence_source="refusal",
        refused=True,
        strategy=strategy,
        ended_by=EndReason.RULES,
        reasoning_steps=[{"step": 1, "kind": "screen", "refusal": kind, "reason": reason}],
    )


def start_run(config: RunConfig, question: str, *, strategy: str, role: str | None = None) -> Run:
    """The harness's run of one question under the run's config: usage, trace and the typed
    end; ``role`` is the model's it asks (a refusal asks none)."""
    return config.run(f"sql_{strategy}", role, strategy=strategy, payload={"question": question})


def ended(run: Run, response: SQLQueryResponse) -> RunResult[SQLQueryResponse]:
    """End the run with the response, which reports the run's model calls, tokens and cost."""
    usage = run.usage
    response.model_calls = usage.model_calls
    response.input_tokens, response.output_tokens = usage.input_tokens, usage.output_tokens
    response.cost_usd = round(usage.cost_usd or 0.0, 6)
    response.seconds = round(time.perf_counter() - run.started, 3)
    return run.end(response, response.ended_by, response.end_detail)


def refused(
    config: RunConfig, question: str, refusal: Refusal, *, strategy: str
) -> RunResult[SQLQueryResponse]:
    """The screen's refusal, as a run the rules ended (no model was asked)."""
    response = refusal_response(question, refusal.reason, strategy=strategy, kind=refusal.kind)
    return ended(start_run(config, question, strategy=strategy), response)


def screen(deps: SQLDeps, question: str) -> Refusal | None:
    """The rules' refusals, plus off-topic: a question that names no table or column of the
    database (its words are not the schema's; an answerable question names at least one)."""
    refusal = screen_question(question)
    if refusal is None and not names_schema(tokenize(question), schema_terms(deps.schema)):
        refusal = Refusal(
            "off_topic",
            f"The question names no table or column of the {deps.schema.name} database; "
            "I only answer questions about its data.",
        )
    return refusal


def _best_unsubmitted(state: AgentStateV2) -> SubmitAnswer | None:
    """When a limit ends the run: the validated query the judge liked best, else the last valid one."""
    valid = [r.query for r in state.validation_results if r.valid]
    if not valid:
        return None
    scored = [(score, q) for score, q in zip(state.judge_scores, state.judged_queries, strict=True)]
    query = max(scored)[1] if scored else valid[-1]
    return SubmitAnswer(
        query=query,
        explanation="The run reached its limits before submitting; this is its best validated query.",
        confidence=LIMIT_OWN_CONFIDENCE,
    )


def _ending(state: AgentStateV2, strategy: str, ended_by: EndReason, detail: str) -> dict[str, Any]:
    """The fields every final response carries: how the run went and ended."""
    return {
        "question": state.question,
        "strategy": strategy,
        "ended_by": ended_by,
        "end_detail": detail,
        "reasoning_steps": state.reasoning_trace,
        "judge_calls": state.judge_calls,
    }


def _withheld(
    state: AgentStateV2,
    answer: SubmitAnswer,
    query: str,
    validation: ValidationResult,
    ending: dict[str, Any],
) -> SQLQueryResponse | None:
    """A query that writes or returns sensitive data is never handed out, not even flagged."""
    unsafe = [e for e in validation.errors if e.kind in WITHHELD_KINDS]
    if not unsafe:
        return None
    reason = f"The query was withheld: {unsafe[0].message}"
    state.step("final", outcome="withheld", query=query, reason=reason)
    confidence = combine_confidence(
        answer.confidence, has_query=False, valid=False, judge_score=None, use_judge=False
    )[0]
    return SQLQueryResponse(
        query=None,
        explanation=reason,
        confidence=confidence,
        confidence_source="refusal",
        refused=True,
        validation_errors=validation.errors,
        **ending,
    )


_NOTES = {
    "judge": "0.4 × own confidence + 0.6 × the judge's latest score for this query",
    "validation": "own confidence × structural validation",
    "validation_failed": "capped at 0.3: the query fails structural validation",
}


def _answered(
    state: AgentStateV2,
    answer: SubmitAnswer,
    query: str,
    validation: ValidationResult,
    *,
    submitted: bool,
    use_judge: bool,
    ending: dict[str, Any],
) -> SQLQueryResponse:
    """A query handed out, its confidence from its own, its validation and the judge's
    latest score for it."""
    judge_idx = [
        i for i, q in enumerate(state.judged_queries) if normalize_sql(q) == normalize_sql(query)
    ]
    judged = state.judge_results[judge_idx[-1]] if judge_idx else None
    confidence, source = combine_confidence(
        answer.confidence,
        has_query=True,
        valid=validation.valid,
        judge_score=judged.correctness_score if judged else None,
        use_judge=use_judge,
    )
    note = _NOTES[source]
    if source == "validation" and use_judge:
        note += " (the judge did not score this query)"
    state.step(
        "final",
        outcome="submitted" if submitted else "best query at limit",
        query=query,
        own_confidence=answer.confidence,
        confidence=confidence,
        confidence_source=source,
        note=note,
    )
    feedback = judged if (judged and use_judge) else None
    return SQLQueryResponse(
        query=query,
        explanation=answer.explanation,
        confidence=confidence,
        confidence_source=source,
        judge_score=feedback.correctness_score if feedback else None,
        judge_feedback=JudgeFeedback(
            is_correct=feedback.is_correct,
            issues=feedback.issues,
            suggestions=feedback.suggestions,
            reasoning=feedback.reasoning,
        )
        if feedback
        else None,
        valid=validation.valid,
        validation_errors=validation.errors,
        executable_sql=validation.transpiled if validation.valid else None,
        tables_used=validation.tables,
        **ending,
    )


def finalize(
    state: AgentStateV2,
    answer: SubmitAnswer | None,
    deps: SQLDeps,
    *,
    strategy: str,
    use_judge: bool,
    ended_by: EndReason,
    detail: str = "",
) -> SQLQueryResponse:
    """The response for a submitted (or limit-ended) answer; deterministic. ``detail`` says
    more on ``ended_by`` (the model error's text)."""
    ending = _ending(state, strategy, ended_by, detail)
    submitted = answer is not None
    if answer is None:
        answer = _best_unsubmitted(state)
    if answer is None:
        said = f"{ended_by} ({detail})" if detail else str(ended_by)
        state.step("final", outcome="no answer", ended_by=said)
        return SQLQueryResponse(
            query=None,
            explanation=f"No valid query was found before the run ended ({said}).",
            confidence=0.0,
            confidence_source="no_answer",
            **ending,
        )
    query = answer.query.strip()
    if not query:
        confidence, source = combine_confidence(
            answer.confidence, has_query=False, valid=False, judge_score=None, use_judge=use_judge
        )
        state.step("final", outcome="refused", reason=answer.explanation)
        return SQLQueryResponse(
            query=None,
            explanation=answer.explanation,
            confidence=confidence,
            confidence_source=source,
            refused=True,
            **ending,
        )
    # The submitted query is checked again (not counted): it may never have been validated.
    validation = latest_validation(state, query) or validate_sql(
        query, deps.schema, dialect=deps.dialect
    )
    withheld = _withheld(state, answer, query, validation, ending)
    if withheld is not None:
        return withheld
    return _answered(
        state,
        answer,
        query,
        validation,
        submitted=submitted,
        use_judge=use_judge,
        ending=ending,
    )


# ---------------------------------------------------------------------- single pass
def single_pass_prompt(
    deps: SQLDeps,
    config: RunConfig,
    state: AgentStateV2,
    question: str,
    mode: Literal["keyword", "semantic"],
    shown: Sequence[tuple[str, str]] = (),
) -> tuple[Any, Any, list[Any]]:
    """Retrieve by ``mode`` and build the one-shot prompt: (model, model bound to the submit
    tool, messages). ``shown``: verified (question, query) pairs of this database, shown as
    demonstrations (the nearest last, next to the question). Shared by the single pass and
    self-consistency."""
    found = retrieve(deps, state, question, deps.config.top_k, mode=mode)
    retrieved = [deps.schema.tables[t["table"]] for t in found["tables"]]
    # the answer's grammar holds the answer space: the prompt needs only the linked entries
    tables = link_tables(question, retrieved, deps.schema, [sql for _, sql in shown])
    model = config.models(ROLES["agent"])
    bound = model.bind_tools([submit_schema()], tool_choice=SUBMIT)
    system = load_prompt(
        PROMPTS,
        "single",
        schema=deps.schema.name,
        tables="\n".join(describe_table(t) for t in tables) or "(no table matches)",
        examples=_demonstrations_text(shown),
    )
    return model, bound, [SystemMessage(system), HumanMessage(f"Question: {question}")]


def _demonstrations_text(shown: Sequence[tuple[str, str]]) -> str:
    if not shown:
        return ""
    pairs = "\n".join(f"Question: {q}\nSQL: {sql}" for q, sql in shown)
    return f"\nQuestions a person answered on this database, with the verified query:\n{pairs}\n"


def ask_once(
    run: Run, bound: Any, messages: list[Any], **kwargs: Any
) -> tuple[SubmitAnswer | None, EndReason, str]:
    """One submit call under the run (its usage and trace): (answer or None, how the call
    ended, the model error's text)."""
    try:
        reply = bound.invoke(messages, config=run.config(), **kwargs)
    except (ModelError, ValidationError) as exc:
        return None, EndReason.ERROR_MODEL, str(exc).splitlines()[0][:120]
    run.updates({"model": {"messages": [reply]}})
    calls = getattr(reply, "tool_calls", None) or []
    try:
        answer = SubmitAnswer.model_validate(calls[0]["args"]) if calls else None
    except ValidationError as exc:
        return None, EndReason.ERROR_MODEL, str(exc).splitlines()[0][:120]
    return answer, EndReason.SUBMIT if answer is not None else EndReason.NO_DECISION, ""


def run_single_pass(
    deps: SQLDeps, config: RunConfig, question: str, mode: Literal["keyword", "semantic"]
) -> RunResult[SQLQueryResponse]:
    """Retrieve by ``mode``, generate once, validate once (the spec's keyword/semantic agents)."""
    refusal = screen(deps, question)
    if refusal is not None:
        return refused(config, question, refusal, strategy=mode)
    state = AgentStateV2(question=question)
    _, bound, messages = single_pass_prompt(deps, config, state, question, mode)
    run = start_run(config, question, strategy=mode, role=ROLES["agent"])
    answer, ended_by, detail = ask_once(run, bound, messages)
    if answer is not None and answer.query.strip():
        validate(deps, state, answer.query)
    response = finalize(
        state, answer, deps, strategy=mode, use_judge=False, ended_by=ended_by, detail=detail
    )
    response.model = config.models.name(ROLES["agent"])
    return ended(run, response)


# ---------------------------------------------------------------------- ReAct (v1 / v2)
def build_react_agent(
    deps: SQLDeps, config: RunConfig, *, use_judge: bool
) -> tuple[ReactAgent[SubmitAnswer], SQLJudge | None]:
    cfg = deps.config
    judge_model = SQLJudge(config.models(ROLES["judge"]), deps.schema) if use_judge else None
    limits = (config.limits or deps.settings.limits).model_copy(
        update={"max_tool_calls": cfg.max_iterations, "max_model_calls": cfg.max_iterations + 2}
    )
    caps = {"retrieve_tables": cfg.max_retrieval_calls, "validate_sql": cfg.max_validation_attempts}
    if use_judge:
        caps["llm_judge_evaluate"] = cfg.max_judge_calls
    system = load_prompt(
        PROMPTS,
        "agent",
        schema=deps.schema.name,
        n_tables=len(deps.schema.tables),
        judge_steps=load_prompt(PROMPTS, "judge_steps") if use_judge else "",
        max_iterations=cfg.max_iterations,
        max_retrieval_calls=cfg.max_retrieval_calls,
        max_validation_attempts=cfg.max_validation_attempts,
        judge_limit=f", {cfg.max_judge_calls} judge calls" if use_judge else "",
    )
    agent = ReactAgent(
        config=replace(config, limits=limits),
        role=ROLES["agent"],
        tools=build_tools(deps, judge_model),
        decision_model=SubmitAnswer,
        system_prompt=system,
        name="sql_v2" if use_judge else "sql_v1",
        submit_name=SUBMIT,
        context_schema=SQLRunContext,
        tool_caps=caps,
        fallback=lambda reason: None,  # type: ignore[arg-type,return-value]
    )
    return agent, judge_model


def run_react(
    deps: SQLDeps, config: RunConfig, question: str, *, use_judge: bool
) -> RunResult[SQLQueryResponse]:
    """The ReAct loop; a fresh ``AgentStateV2`` (every counter at 0) per question. The judge
    is asked inside the loop's run, so its calls are in the run's usage."""
    strategy = "v2" if use_judge else "v1"
    started = time.perf_counter()
    refusal = screen(deps, question)
    if refusal is not None:
        return refused(config, question, refusal, strategy=strategy)
    agent, _ = build_react_agent(deps, config, use_judge=use_judge)
    state = AgentStateV2(question=question)
    result: RunResult[Any] = agent.run(f"Question: {question}", context=SQLRunContext(state=state))
    answer = result.decision if result.ended_by is EndReason.SUBMIT else None
    response = finalize(
        state,
        answer,
        deps,
        strategy=strategy,
        use_judge=use_judge,
        ended_by=result.ended_by,
        detail=result.detail,
    )
    response.model = config.models.name(ROLES["agent"])
    response.judge_model = config.models.name(ROLES["judge"]) if use_judge else None
    response.model_calls = result.usage.model_calls
    response.input_tokens = result.usage.input_tokens
    response.output_tokens = result.usage.output_tokens
    response.cost_usd = round(result.usage.cost_usd or 0.0, 6)
    response.seconds = round(time.perf_counter() - started, 3)
    return replace(result, decision=response)
