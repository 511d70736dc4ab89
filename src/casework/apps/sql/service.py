"""What the CLI, the API and the evaluation call: answer a question with a strategy, and run
a query only after it passed structural validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from casework.apps.sql.agent import AgentKind
from casework.apps.sql.database import execute_read_only
from casework.apps.sql.deps import SQLConfig, SQLDeps, build_deps
from casework.apps.sql.models import ExecutionResult, SQLQueryResponse
from casework.apps.sql.schemas import load_schema
from casework.apps.sql.strategies import STRATEGIES
from casework.apps.sql.validation import validate_sql
from casework.errors import InputError
from casework.registry import strategy_named

__all__ = ["STRATEGIES", "SQLAgent", "answer", "ask", "execute_validated"]


def execute_validated(deps: SQLDeps, query: str) -> ExecutionResult:
    """Validate, then run the transpiled query read-only. The only way queries are executed."""
    if not deps.db_url:
        raise InputError(
            "No database to run on; create one with `casework sql db create` or pass --db URL."
        )
    result = validate_sql(query, deps.schema, dialect=deps.dialect)
    if not result.valid or result.transpiled is None:
        raise InputError(f"The query was not run: {result.errors[0].message}")
    return execute_read_only(
        deps.db_url,
        result.transpiled,
        max_rows=deps.config.max_rows,
        timeout_seconds=deps.config.timeout_seconds,
    )


def answer(deps: SQLDeps, question: str, strategy: str = "v2") -> SQLQueryResponse:
    decision = strategy_named(STRATEGIES, strategy)(question, deps)
    return decision.response  # type: ignore[attr-defined]


def ask(
    deps: SQLDeps, question: str, *, strategy: str = "v2", execute: bool = False
) -> SQLQueryResponse:
    """Answer, and with ``execute`` run the answer's query when it passed validation."""
    response = answer(deps, question, strategy)
    if execute and response.query and response.valid:
        response.result = execute_validated(deps, response.query)
    return response


class SQLAgent:
    """The spec's entry point: ``SQLAgent(schema_path="schemas/").run(question)`` -> dict.

    ``strategy`` picks the agent (``v2`` by default, ``v1``, ``keyword``, ``semantic``);
    ``db_url`` enables ``run(question, execute=True)``.
    """

    def __init__(
        self,
        schema_path: str | Path,
        *,
        strategy: AgentKind = "v2",
        retrieval_type: Literal["semantic", "keyword"] = "semantic",
        top_k: int = 5,
        max_iterations: int = 10,
        max_retrieval_calls: int = 3,
        max_validation_attempts: int = 4,
        max_judge_calls: int = 3,
        db_url: str | None = None,
        settings: Any = None,
        models: Any = None,
    ) -> None:
        config = SQLConfig(
            retrieval_type=retrieval_type,
            top_k=top_k,
            max_iterations=max_iterations,
            max_retrieval_calls=max_retrieval_calls,
            max_validation_attempts=max_validation_attempts,
            max_judge_calls=max_judge_calls,
        )
        self.strategy = strategy
        self.deps = build_deps(
            settings, schema=load_schema(schema_path), db_url=db_url, models=models, config=config
        )

    def run(self, question: str, *, execute: bool = False) -> dict[str, Any]:
        return ask(self.deps, question, strategy=self.strategy, execute=execute).model_dump(
            mode="json"
        )
