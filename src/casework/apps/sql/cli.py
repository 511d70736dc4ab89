"""``casework sql …``: schemas, the queried database, questions, the demo.

Thin: commands build deps, call ``service`` and print. Errors a user can cause are
CaseworkError subclasses, printed by the root CLI as one sentence with a non-zero exit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from casework.clikit import err_console, print_json

__all__ = ["app"]

console = Console(width=None if sys.stdout.isatty() else 120)
app = typer.Typer(
    help="Text-to-SQL with structural validation and a judge. Start with "
    '`casework sql db create --schema FILE --rows 200`, then `casework sql ask "…" --execute`.',
    no_args_is_help=True,
)
schema_app = typer.Typer(help="Load, reflect and show table schemas.", no_args_is_help=True)
db_app = typer.Typer(help="The database questions run on.", no_args_is_help=True)
app.add_typer(schema_app, name="schema")
app.add_typer(db_app, name="db")


def _settings() -> Any:
    from casework.config import get_settings

    return get_settings()


# ---------------------------------------------------------------------- schemas
@schema_app.command("load")
def schema_load(
    path: Path = typer.Argument(..., help="A schema JSON file or a folder of them."),
    name: str | None = typer.Option(
        None, "--name", help="Name to store it under (default: file name)."
    ),
    db_url: str | None = typer.Option(None, "--db", help="Database URL the schema describes."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check a schema file (table -> category, description, fields) and store it."""
    from casework.apps.sql.service import load_schema_file

    schema = load_schema_file(_settings(), path, name=name, db_url=db_url)
    if as_json:
        print_json({"name": schema.name, "tables": len(schema.tables), "source": schema.source})
        return
    columns = sum(len(t.fields) for t in schema.tables.values())
    console.print(
        f"loaded schema [bold]{schema.name}[/]: {len(schema.tables)} tables, {columns} columns from {path}"
    )


@schema_app.command("reflect")
def schema_reflect(
    url: str = typer.Argument(..., help="Database URL (sqlite:///PATH or postgresql://…)."),
    name: str | None = typer.Option(None, "--name", help="Name to store it under."),
    out: Path | None = typer.Option(None, "--out", help="Also write the schema JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print the schema JSON."),
) -> None:
    """Build a schema from a live database (SQLAlchemy inspection) and store it with its URL."""
    from casework.apps.sql.service import reflect_database
    from casework.redact import scrub  # a URL's password is never printed

    schema = reflect_database(_settings(), url, name=name)
    if out is not None:
        out.write_text(json.dumps(schema.to_document(), indent=2) + "\n")
    if as_json:
        print_json(schema.to_document())
        return
    console.print(
        f"reflected schema [bold]{schema.name}[/]: {len(schema.tables)} tables from {scrub(url)}"
    )


@schema_app.command("show")
def schema_show(
    name: str | None = typer.Argument(None, help="Stored schema name (default: the newest)."),
    as_json: bool = typer.Option(False, "--json", help="Print the schema JSON."),
) -> None:
    """Show a stored schema: tables, categories, columns."""
    from casework.apps.sql.deps import build_deps
    from casework.redact import redact_url

    deps = build_deps(_settings(), schema_name=name)
    url = redact_url(deps.db_url) if deps.db_url else None  # the password is never shown
    if as_json:
        print_json({"name": deps.schema.name, "db_url": url, "tables": deps.schema.to_document()})
        return
    table = Table(title=f"{deps.schema.name} ({url or 'no database'})")
    table.add_column("table")
    table.add_column("category")
    table.add_column("columns")
    table.add_column("description")
    for t in deps.schema.tables.values():
        table.add_row(t.name, t.category, ", ".join(c.name for c in t.fields), t.description)
    console.print(table)


# ---------------------------------------------------------------------- database
@db_app.command("create")
def db_create(
    schema_path: Path = typer.Option(..., "--schema", help="Schema JSON file or folder."),
    rows: int = typer.Option(100, "--rows", help="Rows per table."),
    url: str | None = typer.Option(
        None, "--url", help="Database URL (default: SQLite under the casework home)."
    ),
    name: str | None = typer.Option(None, "--name", help="Schema name (default: file name)."),
    seed: int = typer.Option(0, "--seed", help="Random seed; same seed, same rows."),
    replace: bool = typer.Option(False, "--replace", help="Rebuild tables that already exist."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Create the schema's tables and fill them with deterministic synthetic rows."""
    from casework.apps.sql.service import create_database_from
    from casework.redact import scrub  # a URL's password is never printed

    with err_console.status(f"creating the tables of {schema_path.name}, {rows} rows each"):
        created = create_database_from(
            _settings(), schema_path, rows=rows, url=url, name=name, seed=seed, replace=replace
        )
    name, url, counts = created.schema.name, created.url, created.rows
    if as_json:
        print_json({"schema": name, "url": scrub(url), "rows": counts})
        return
    console.print(
        f"created [bold]{name}[/] at {scrub(url)}: {len(counts)} tables, "
        f"{sum(counts.values())} rows"
    )


# ---------------------------------------------------------------------- questions
@app.command()
def ask(
    question: str = typer.Argument(..., help="The question, in words."),
    execute: bool = typer.Option(
        False, "--execute", help="Run the query read-only and print the rows."
    ),
    strategy: str = typer.Option(
        "cascade",
        "--strategy",
        help="cascade (the screen, the bundled model's self-consistency, then a remote model "
        "when one is configured), or one strategy: rules, keyword, semantic, v1, v2, consistency.",
    ),
    schema: str | None = typer.Option(
        None, "--schema", help="Stored schema name (default: the newest)."
    ),
    schema_path: Path | None = typer.Option(
        None, "--schema-path", help="Schema JSON file or folder to use instead of a stored one."
    ),
    db_url: str | None = typer.Option(
        None, "--db", help="Database URL to run on (default: the schema's)."
    ),
    retrieval: str = typer.Option("semantic", "--retrieval", help="semantic or keyword (v1/v2)."),
    model: str | None = typer.Option(None, "--model", help="Agent model, provider:name."),
    judge_model: str | None = typer.Option(
        None, "--judge-model", help="Judge model, provider:name."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the whole SQLQueryResponse as JSON."),
) -> None:
    """Answer a question with SQL; with --execute, run it on a read-only connection."""
    from casework.apps.sql.deps import SQLConfig
    from casework.apps.sql.service import ask as ask_fn
    from casework.apps.sql.service import check_question, deps_for
    from casework.errors import InputError
    from casework.runtime.runconfig import RunConfig

    check_question(question, strategy)
    if retrieval not in ("semantic", "keyword"):
        raise InputError(f"Unknown retrieval {retrieval!r}; use semantic or keyword.")
    settings = _settings()
    roles = {k: v for k, v in {"specialist": model, "judge": judge_model}.items() if v}
    deps = deps_for(
        settings,
        schema_path=schema_path,
        schema_name=schema,
        db_url=db_url,
        config=SQLConfig(retrieval_type=retrieval),  # type: ignore[arg-type]
    )
    if execute and not deps.db_url:
        raise InputError(
            "No database to run on; create one with `casework sql db create` or pass --db URL."
        )
    with err_console.status(f"{strategy}: thinking about {question[:60]!r}"):
        response = ask_fn(
            deps, question, RunConfig.of(settings, roles=roles), strategy=strategy, execute=execute
        )
    if as_json:
        print_json(response.model_dump(mode="json"))
        return
    _print_response(response)


def _print_response(r: Any) -> None:
    if r.refused or not r.query:
        console.print(f"[bold yellow]no query[/] ({r.confidence_source}): {r.explanation}")
        console.print(f"confidence {r.confidence:.2f}")
        _print_review(r)
        return
    console.print(f"[bold]{r.query}[/]", highlight=False)
    if r.executable_sql and r.executable_sql != r.query:
        console.print(f"[dim]runs as: {r.executable_sql}[/]", highlight=False)
    status = "valid" if r.valid else "INVALID: " + "; ".join(e.message for e in r.validation_errors)
    judge = f", judge {r.judge_score:.2f}" if r.judge_score is not None else ""
    console.print(
        f"{status}; confidence {r.confidence:.2f} ({r.confidence_source}{judge}); "
        f"tables: {', '.join(r.tables_used) or '-'}; {r.model_calls} model calls in {r.seconds:.1f}s",
        highlight=False,
    )
    console.print(r.explanation, highlight=False)
    if r.result is not None:
        table = Table(show_lines=False)
        for column in r.result.columns:
            table.add_column(column)
        for row in r.result.rows:
            table.add_row(*["NULL" if v is None else str(v) for v in row])
        console.print(table)
        more = " (capped)" if r.result.truncated else ""
        console.print(f"{len(r.result.rows)} rows{more} in {r.result.seconds:.3f}s")
    _print_review(r)


def _print_review(r: Any) -> None:
    if r.review_id is not None:
        console.print(
            f"Nobody was sure: waiting for a person as sql review item {r.review_id} "
            "(the inbox of `casework serve`).",
            highlight=False,
        )


@app.command()
def validate(
    query: str = typer.Argument(..., help="One SQL query (PostgreSQL or SQLite style)."),
    schema: str | None = typer.Option(
        None, "--schema", help="Stored schema name (default: the newest)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the ValidationResult as JSON."),
) -> None:
    """Check a query structurally against the schema; exit 1 when it is not valid."""
    from casework.apps.sql.deps import build_deps
    from casework.apps.sql.service import validate_query

    result = validate_query(build_deps(_settings(), schema_name=schema), query)
    if as_json:
        print_json(result.model_dump(mode="json"))
    elif result.valid:
        console.print(f"valid; tables: {', '.join(result.tables)}", highlight=False)
        console.print(
            f"runs on {result.dialect} as: {result.transpiled}", highlight=False, soft_wrap=True
        )
    else:
        for issue in result.errors:
            if not issue.suggestions:
                hint = ""
            elif issue.kind in ("table", "column"):  # suggestions are names
                hint = f" Did you mean {', '.join(issue.suggestions)}?"
            else:  # suggestions are advice
                hint = " " + " ".join(issue.suggestions)
            console.print(f"[red]{issue.kind}[/]: {issue.message}{hint}", highlight=False)
    if not result.valid:
        raise typer.Exit(1)


@app.command()
def demo() -> None:
    """Build the security database, then answer questions with the rules and the bundled model."""
    from casework.apps.sql.demo import run_demo

    run_demo(console)
