"""``casework sql demo``: build the bundled security database (once), show validation at work
on a PostgreSQL query that needs SQLite date arithmetic, refuse a destructive request, then
answer one question with the bundled model and run it read-only.

The model part is the single-pass ``keyword`` agent (one model call): on a shared 2-core
machine each bundled-model call takes minutes, and v2 needs five or more of them
(`casework sql ask "…" --strategy v2 --execute` runs the full loop)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.console import Console

__all__ = ["DEMO_QUESTION", "run_demo"]

DEMO_QUESTION = "How many critical alerts were raised in the last 30 days?"
DEMO_QUERY = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical' AND created_at > NOW() - INTERVAL '30 days'"
DEMO_ROWS = 200


def run_demo(
    console: Console | None = None, *, strategy: str = "keyword", models: Any = None
) -> None:
    """``models`` (a ``RoleModels``) replaces the configured models (tests)."""
    from casework.apps.sql.deps import build_deps
    from casework.apps.sql.service import ask, demo_database, execute_validated, validate_query
    from casework.config import get_settings
    from casework.errors import CaseworkError
    from casework.runtime.runconfig import RunConfig

    console = console or Console()
    settings = get_settings()
    schema, url = demo_database(settings, rows=DEMO_ROWS)
    deps = build_deps(settings, schema=schema, db_url=url)
    config = RunConfig.of(settings)
    if models is not None:
        config = replace(config, models=models)
    console.print(f"[bold]sql[/]: {len(schema.tables)} tables, {DEMO_ROWS} rows each at {url}")

    checked = validate_query(deps, DEMO_QUERY)
    console.print(f"  validated: {DEMO_QUERY}", highlight=False, soft_wrap=True)
    console.print(f"  runs on SQLite as: {checked.transpiled}", highlight=False, soft_wrap=True)
    console.print(f"  -> {execute_validated(deps, DEMO_QUERY).rows}")
    typo = validate_query(deps, "SELECT usrname FROM users").errors[0]
    console.print(
        f"  'SELECT usrname FROM users': {typo.message} Did you mean {', '.join(typo.suggestions)}?",
        highlight=False,
        soft_wrap=True,
    )

    refused = ask(deps, "Delete all alerts older than a week", config, strategy="rules")
    console.print(
        f"  'Delete all alerts older than a week': no query, {refused.explanation}",
        highlight=False,
        soft_wrap=True,
    )

    try:
        response = ask(
            deps.with_config(retrieval_type="keyword", top_k=3),
            DEMO_QUESTION,
            config,
            strategy=strategy,
            execute=True,
        )
    except CaseworkError as exc:
        console.print(f"  agent skipped: {exc}")
        return
    console.print(
        f"  {strategy} ({response.model}) on {DEMO_QUESTION!r}:", highlight=False, soft_wrap=True
    )
    console.print(f"    {response.query or 'no query'}", highlight=False, soft_wrap=True)
    judge = f", judge {response.judge_score:.2f}" if response.judge_score is not None else ""
    rows = response.result.rows if response.result else "not run"
    console.print(
        f"    confidence {response.confidence:.2f} ({response.confidence_source}{judge}), "
        f"{response.model_calls} model calls, {response.seconds:.1f}s, rows: {rows}",
        highlight=False,
        soft_wrap=True,
    )
