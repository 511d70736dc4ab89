"""What the CLI, the API and the evaluation call: answer a question with a strategy, and run
a query only after it passed structural validation."""

from __future__ import annotations

from casework.apps.sql.database import execute_read_only
from casework.apps.sql.deps import SQLDeps
from casework.apps.sql.models import ExecutionResult, SQLQueryResponse
from casework.apps.sql.validation import validate_sql
from casework.errors import InputError

__all__ = ["STRATEGY_NAMES", "answer", "ask", "execute_validated"]

STRATEGY_NAMES = ("rules", "keyword", "semantic", "v1", "v2", "consistency", "cascade")


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
    from casework.apps.sql.strategies import STRATEGIES

    if strategy not in STRATEGIES:
        raise InputError(f"Unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}.")
    decision = STRATEGIES[strategy](question, deps)
    return decision.response  # type: ignore[attr-defined]


def ask(
    deps: SQLDeps, question: str, *, strategy: str = "v2", execute: bool = False
) -> SQLQueryResponse:
    """Answer, and with ``execute`` run the answer's query when it passed validation."""
    response = answer(deps, question, strategy)
    if execute and response.query and response.valid:
        response.result = execute_validated(deps, response.query)
    return response
