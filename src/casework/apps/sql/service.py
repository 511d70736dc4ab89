"""What the CLI, the API and the evaluation call: answer a question with a strategy, and run
a query only after it passed structural validation."""

from __future__ import annotations

from dataclasses import replace
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
from casework.runtime.runconfig import RunConfig

__all__ = ["STRATEGY_NAMES", "SQLAgent", "answer", "ask", "execute_validated"]

STRATEGY_NAMES = tuple(STRATEGIES)


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


def answer(
    deps: SQLDeps, question: str, config: RunConfig, strategy: str = "v2"
) -> SQLQueryResponse:
    if strategy not in STRATEGIES:
        raise InputError(f"Unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}.")
    decision = STRATEGIES[strategy](question, deps, config)
    return decision.response  # type: ignore[attr-defined]


def ask(
    deps: SQLDeps,
    question: str,
    config: RunConfig,
    *,
    strategy: str = "v2",
    execute: bool = False,
) -> SQLQueryResponse:
    """Answer under ``config``, and with ``execute`` run the answer's query when it passed
    validation."""
    response = answer(deps, question, config, strategy)
    if execute and response.query and response.valid:
        response.result = execute_validated(deps, response.query)
    return response


class SQLAgent:
    """The spec's entry point: ``SQLAgent(schema_path="schemas/").run(question)`` -> dict.

    ``strategy`` picks the agent (``v2`` by default, ``v1``, ``keyword``, ``semantic``);
    ``db_url`` enables ``run(question, execute=True)``; ``models`` (a ``RoleModels``)
    replaces the settings' models.
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
            settings, schema=load_schema(schema_path), db_url=db_url, config=config
        )
        self.config = RunConfig.of(self.deps.settings)
        if models is not None:
            self.config = replace(self.config, models=models)

    def run(self, question: str, *, execute: bool = False) -> dict[str, Any]:
        response = ask(self.deps, question, self.config, strategy=self.strategy, execute=execute)
        return response.model_dump(mode="json")
