"""sql: text-to-SQL with structural validation and a separate LLM judge, measured by execution.

Schemas come in the original's JSON format (or are reflected from a live database); a
database of deterministic synthetic rows can be built for any schema. The agent retrieves
tables (BM25 or MiniLM), writes SQL, validates it structurally with sqlglot (tables, columns,
one read-only statement, PostgreSQL -> SQLite transpiling with date arithmetic), asks a judge
model, and submits with a combined confidence; queries run on read-only connections only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casework.registry import AppSpec

__all__ = ["APP"]


def _cli() -> Any:
    from casework.apps.sql.cli import app

    return app


def _router(settings: Any) -> Any:
    from casework.apps.sql.api import router

    return router(settings)


def _strategies() -> Any:
    from casework.apps.sql.strategies import STRATEGIES

    return STRATEGIES


def _eval_suite() -> Any:
    from casework.apps.sql.evalsuite import eval_suite

    return eval_suite()


def _demo() -> None:
    from casework.apps.sql.demo import run_demo

    run_demo()


APP = AppSpec(
    name="sql",
    description="Text-to-SQL with structural validation, an LLM judge and read-only execution.",
    migrations=Path(__file__).parent / "migrations" / "versions",
    cli=_cli,
    router=_router,
    demo=_demo,
    eval_suite=_eval_suite,
    strategies=_strategies,
)
