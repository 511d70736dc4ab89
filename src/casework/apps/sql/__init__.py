"""sql: text-to-SQL with structural validation and a separate LLM judge, measured by execution.

Schemas come in the original's JSON format (or are reflected from a live database); a
database of deterministic synthetic rows can be built for any schema. The agent retrieves
tables (BM25 or MiniLM), writes SQL, validates it structurally with sqlglot (tables, columns,
one read-only statement, PostgreSQL -> SQLite transpiling with date arithmetic), asks a judge
model, and submits with a combined confidence; queries run on read-only connections only.
"""

from __future__ import annotations

from pathlib import Path

from casework.registry import AppSpec, lazy_attr, lazy_call

__all__ = ["APP"]


APP = AppSpec(
    name="sql",
    description="Text-to-SQL with structural validation, an LLM judge and read-only execution.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=lazy_attr("casework.apps.sql.cli:app"),
    router=lazy_call("casework.apps.sql.api:router"),
    demo=lazy_call("casework.apps.sql.demo:run_demo"),
    eval_suite=lazy_call("casework.apps.sql.evalsuite:eval_suite"),
    service="casework.apps.sql.service",
    strategies=lazy_attr("casework.apps.sql.strategies:STRATEGIES"),
    examples=lazy_attr("casework.apps.sql.examples:EXAMPLES"),
    review=lazy_call("casework.apps.sql.review:SqlReview"),
)
