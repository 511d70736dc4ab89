"""The agent's tools, the spec's list: ``retrieve_tables``, ``validate_sql``,
``llm_judge_evaluate`` (v2); ``submit_answer`` is the ReactAgent's terminal tool.

Each tool is a thin wrapper over a plain function (``retrieve``, ``validate``, ``judge``)
that works on the question's ``AgentStateV2``, which travels in the run context (never in
model arguments). The functions count calls against the spec's per-question limits and
answer with an observation, not an exception, when a limit is spent; a source that cannot
answer raises ``SourceUnavailable``, which the runtime turns into an observation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from langchain.tools import ToolRuntime, tool
from langchain_core.tools import BaseTool

from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.judge import SQLJudge
from casework.apps.sql.models import AgentStateV2, ValidationResult
from casework.apps.sql.retrieval import RetrievalMode, column_hint, retrieve_tables
from casework.apps.sql.rules import JUDGE_PASS, normalize_sql
from casework.apps.sql.validation import validate_sql
from casework.errors import SourceUnavailable

__all__ = ["SQLRunContext", "build_tools", "judge", "latest_validation", "retrieve", "validate"]


@dataclass(frozen=True)
class SQLRunContext:
    """Per-question run context: the state the tools update."""

    state: AgentStateV2


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def retrieve(
    deps: SQLDeps,
    state: AgentStateV2,
    question: str,
    top_k: int | None = None,
    *,
    mode: RetrievalMode | None = None,
) -> dict[str, Any]:
    """Tables for the question with schemas and scores. When the semantic index cannot
    answer, ``SourceUnavailable`` goes up to the runtime, which shows the model the runtime's
    ``{"status": "unavailable", ...}`` observation; the failed call does not count against the
    retrieval limit, and the question's later retrievals use keyword (BM25)."""
    cfg = deps.config
    state.iteration += 1
    if state.retrieval_calls >= cfg.max_retrieval_calls:
        return {
            "status": "limit",
            "message": f"Retrieval limit ({cfg.max_retrieval_calls}) reached; use the tables already retrieved.",
        }
    mode = mode or ("keyword" if state.semantic_unavailable else cfg.retrieval_type)
    k = top_k or cfg.top_k
    try:
        tables = retrieve_tables(
            deps.schema, question or state.question, k, mode=mode,
            vectors_dir=deps.vectors_dir or deps.settings.vectors_dir,
        )  # fmt: skip
    except SourceUnavailable as exc:
        state.semantic_unavailable = True
        state.step("retrieve_tables", question=question, mode=mode, tables=[], error=str(exc))
        raise SourceUnavailable(
            exc.source, f"{exc.reason}; call retrieve_tables again for keyword results"
        ) from exc
    state.retrieval_calls += 1
    for t in tables:
        if t.table not in {r.table for r in state.retrieved_tables}:
            state.retrieved_tables.append(t)
    state.step(
        "retrieve_tables", question=question, mode=mode, tables=[(t.table, t.score) for t in tables]
    )
    out: dict[str, Any] = {
        "tables": [
            {
                "table": t.table,
                "score": t.score,
                "description": t.description,
                "columns": [column_hint(c) for c in t.columns],
            }
            for t in tables
        ]
    }
    if not tables:
        out["message"] = (
            "No table matches this question; it may not be answerable with this database."
        )
    return out


def latest_validation(state: AgentStateV2, query: str) -> ValidationResult | None:
    key = normalize_sql(query)
    for result in reversed(state.validation_results):
        if normalize_sql(result.query) == key:
            return result
    return None


def validate(deps: SQLDeps, state: AgentStateV2, query: str) -> dict[str, Any]:
    """Structural validation with errors and suggestions."""
    cfg = deps.config
    state.iteration += 1
    if state.validation_calls >= cfg.max_validation_attempts:
        return {
            "status": "limit",
            "message": f"Validation limit ({cfg.max_validation_attempts}) reached; submit your best query.",
        }
    state.validation_calls += 1
    result = validate_sql(query, deps.schema, dialect=deps.dialect)
    state.generated_queries.append(query)
    state.validation_results.append(result)
    state.step(
        "validate_sql", query=query, valid=result.valid,
        errors=[e.message for e in result.errors],
    )  # fmt: skip
    if result.valid:
        return {"valid": True, "tables": result.tables}
    return {
        "valid": False,
        "errors": [{"error": e.message, "suggestions": e.suggestions} for e in result.errors],
    }


def judge(
    deps: SQLDeps,
    state: AgentStateV2,
    judge_model: SQLJudge,
    query: str,
    question: str | None = None,
) -> dict[str, Any]:
    """The judge's score, issues and suggestions; only for a query that passed validation."""
    cfg = deps.config
    checked = latest_validation(state, query)
    if checked is None:
        answer = validate(deps, state, query)  # structural validation always comes first
        checked = latest_validation(state, query)
        if checked is None:
            return answer
    if not checked.valid:
        return {
            "status": "not_validated",
            "message": "The judge only evaluates queries that pass validate_sql; fix these errors first.",
            "errors": [e.message for e in checked.errors],
        }
    state.iteration += 1
    if state.judge_calls >= cfg.max_judge_calls:
        return {
            "status": "limit",
            "message": f"Judge limit ({cfg.max_judge_calls}) reached; submit your answer now.",
        }
    state.judge_calls += 1
    # The judge answers the user's question, not whatever question the model restated.
    verdict = judge_model.evaluate(state.question, query, checked.tables)
    if verdict is None:
        state.step("llm_judge_evaluate", query=query, score=None, error="no usable evaluation")
        return {
            "status": "unavailable",
            "message": "The judge gave no usable evaluation; submit or try once more.",
        }
    state.judge_results.append(verdict)
    state.judge_scores.append(verdict.correctness_score)
    state.judged_queries.append(query)
    state.step(
        "llm_judge_evaluate", query=query, score=verdict.correctness_score,
        issues=verdict.issues, suggestions=verdict.suggestions, reasoning=verdict.reasoning,
    )  # fmt: skip
    next_step = (
        "Good enough: call submit_answer."
        if verdict.correctness_score >= JUDGE_PASS
        else "Below 0.7: fix the query using the issues and suggestions, validate it, and ask the judge again."
    )
    return {**verdict.model_dump(), "next": next_step}


def build_tools(deps: SQLDeps, judge_model: SQLJudge | None) -> list[BaseTool]:
    """The spec's tools bound to ``deps``; ``llm_judge_evaluate`` only with a judge (v2)."""

    @tool
    def retrieve_tables(question: str, runtime: ToolRuntime[SQLRunContext], top_k: int = 5) -> str:
        """Find the tables relevant to the question: names, descriptions, columns with types, and scores."""
        return _dumps(retrieve(deps, runtime.context.state, question, top_k))

    @tool
    def validate_sql(query: str, runtime: ToolRuntime[SQLRunContext]) -> str:
        """Check a SQL query structurally: syntax, one read-only statement, tables and columns exist. Returns errors with suggestions."""
        return _dumps(validate(deps, runtime.context.state, query))

    tools: list[BaseTool] = [retrieve_tables, validate_sql]
    if judge_model is not None:

        @tool
        def llm_judge_evaluate(
            query: str, question: str, runtime: ToolRuntime[SQLRunContext]
        ) -> str:
            """Ask a separate judge whether a validated query answers the question: score 0-1, issues, suggestions."""
            return _dumps(judge(deps, runtime.context.state, judge_model, query, question))

        tools.append(llm_judge_evaluate)
    return tools
