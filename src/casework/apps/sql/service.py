"""What the app's faces (CLI, API, demo, evaluation) call: store, reflect and create schemas
and databases, check a question, answer it with a strategy, validate a query, and run a query
only after it passed structural validation."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from casework.apps.sql.database import (
    create_database,
    default_db_url,
    execute_read_only,
    sqlite_path,
    stored_url,
)
from casework.apps.sql.deps import BUNDLED_SCHEMA, SQLConfig, SQLDeps, build_deps, open_repository
from casework.apps.sql.models import (
    REVIEW_WAITING,
    DatabaseSchema,
    ExecutionResult,
    SQLQueryResponse,
    StoredAnswer,
    ValidationResult,
)
from casework.apps.sql.repository import AnswerRepository
from casework.apps.sql.rules import screen_question
from casework.apps.sql.schemas import load_schema, reflect_schema
from casework.apps.sql.strategies import STRATEGIES
from casework.apps.sql.validation import validate_sql
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.registry import strategy_named
from casework.runtime.context import caller_name
from casework.runtime.memory import ExampleDraft
from casework.runtime.review_provider import DecideOutcome, outcome_of, outcome_text, settle_once
from casework.runtime.runconfig import RunConfig
from casework.stores import open_stores

__all__ = [
    "STRATEGIES",
    "CreatedDatabase",
    "SQLAgent",
    "answer",
    "ask",
    "bundled_schema",
    "check_query",
    "check_question",
    "create_database_from",
    "decide_review",
    "demo_database",
    "deps_for",
    "deps_of_answer",
    "ensure_database",
    "execute_validated",
    "load_schema_file",
    "open_answers",
    "reflect_database",
    "settled_outcome",
    "validate_query",
]


# ---------------------------------------------------------------------- schemas and databases
def bundled_schema() -> DatabaseSchema:
    """The bundled security schema (the demo's and the evaluation's)."""
    return load_schema(BUNDLED_SCHEMA, name="security")


def load_schema_file(
    settings: Settings, path: Path, *, name: str | None = None, db_url: str | None = None
) -> DatabaseSchema:
    """Check a schema file (or folder of them) and store it, with the database it describes."""
    schema = load_schema(path, name=name)
    db_url = stored_url(db_url) if db_url is not None else None
    open_repository(settings).save(schema, db_url=db_url)
    return schema


def reflect_database(settings: Settings, url: str, *, name: str | None = None) -> DatabaseSchema:
    """Build a schema from a live database and store it with its URL."""
    url = stored_url(url, exists=False)  # a missing file is reflect_schema's sentence
    schema = reflect_schema(url, name=name)
    open_repository(settings).save(schema, db_url=url)
    return schema


@dataclass(frozen=True)
class CreatedDatabase:
    schema: DatabaseSchema
    url: str
    rows: dict[str, int]
    """Rows per table."""


def create_database_from(
    settings: Settings,
    schema_path: Path,
    *,
    rows: int = 100,
    url: str | None = None,
    name: str | None = None,
    seed: int = 0,
    replace: bool = False,
) -> CreatedDatabase:
    """Create a schema file's tables (SQLite under the home unless ``url``), fill them with
    deterministic synthetic rows, and store the schema with the database's URL."""
    schema = load_schema(schema_path, name=name)
    url = stored_url(url, exists=False) if url else default_db_url(settings.home, schema.name)
    counts = create_database(schema, url, rows=rows, seed=seed, replace=replace)
    open_repository(settings).save(schema, db_url=url)
    return CreatedDatabase(schema=schema, url=url, rows=counts)


def ensure_database(schema: DatabaseSchema, url: str, *, rows: int, seed: int = 0) -> bool:
    """Create the SQLite database at ``url`` with ``rows`` rows per table unless its file
    exists already; True when it was created now."""
    path = sqlite_path(url)
    if path is None or path.is_file():
        return False
    create_database(schema, url, rows=rows, seed=seed)
    return True


def demo_database(settings: Settings, *, rows: int) -> tuple[DatabaseSchema, str]:
    """The bundled schema's database under the home (built once) and stored as the newest
    schema; returns the schema and the database's URL."""
    schema = bundled_schema()
    url = default_db_url(settings.home, schema.name)
    ensure_database(schema, url, rows=rows)
    open_repository(settings).save(schema, db_url=url)
    return schema, url


def deps_for(
    settings: Settings,
    *,
    schema_path: Path | None = None,
    schema_name: str | None = None,
    db_url: str | None = None,
    config: SQLConfig | None = None,
) -> SQLDeps:
    """Deps on a schema file when ``schema_path`` names one, else on a stored schema (by
    name, else the newest), else on the bundled one."""
    schema = load_schema(schema_path) if schema_path is not None else None
    return build_deps(
        settings, schema=schema, schema_name=schema_name, db_url=db_url, config=config
    )


# ---------------------------------------------------------------------- questions and queries
def check_question(question: str, strategy: str) -> None:
    """Refuse, before any deps are built, a malformed question or an unknown strategy."""
    malformed = screen_question(question)
    if malformed is not None and malformed.kind == "malformed":
        raise InputError(malformed.reason)
    strategy_named(STRATEGIES, strategy)


def validate_query(deps: SQLDeps, query: str) -> ValidationResult:
    """Check a query structurally against the deps' schema, for the deps' database dialect."""
    return validate_sql(query, deps.schema, dialect=deps.dialect)


def execute_validated(deps: SQLDeps, query: str) -> ExecutionResult:
    """Validate, then run the transpiled query read-only. The only way queries are executed."""
    if not deps.db_url:
        raise InputError(
            "No database to run on; create one with `casework sql db create` or pass --db URL."
        )
    result = validate_query(deps, query)
    if not result.valid or result.transpiled is None:
        raise InputError(f"The query was not run: {result.errors[0].message}")
    return execute_read_only(
        deps.db_url,
        result.transpiled,
        max_rows=deps.config.max_rows,
        timeout_seconds=deps.config.timeout_seconds,
    )


def answer(
    deps: SQLDeps, question: str, config: RunConfig, strategy: str = "cascade"
) -> SQLQueryResponse:
    decision = strategy_named(STRATEGIES, strategy)(question, deps, config)
    return decision.response  # type: ignore[attr-defined]


def ask(
    deps: SQLDeps,
    question: str,
    config: RunConfig,
    *,
    strategy: str = "cascade",
    execute: bool = False,
) -> SQLQueryResponse:
    """Answer under ``config``, and with ``execute`` run the answer's query when it passed
    validation. An answer nobody was sure of is kept for a person (``review_id``)."""
    decision = strategy_named(STRATEGIES, strategy)(question, deps, config)
    response: SQLQueryResponse = decision.response  # type: ignore[attr-defined]
    if execute and response.query and response.valid:
        response.result = execute_validated(deps, response.query)
    if decision.verdict == "NEEDS_REVIEW":
        response.review_id = open_answers(deps.settings).keep(
            question=question,
            schema_name=deps.schema.name,
            query=response.query,
            verdict=decision.verdict,
            response=response.model_dump(mode="json"),
            asked_by=caller_name(config.caller),
        )
    return response


class SQLAgent:
    """The spec's entry point: ``SQLAgent(schema_path="schemas/").run(question)`` -> dict.

    ``strategy`` names one of ``STRATEGIES`` (``cascade`` by default: the screen, the bundled
    model's self-consistency, then a remote model when one is configured; or ``v2``, ...);
    ``db_url`` enables ``run(question, execute=True)``; ``models`` (a ``RoleModels``)
    replaces the settings' models.
    """

    def __init__(
        self,
        schema_path: str | Path,
        *,
        strategy: str = "cascade",
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
        strategy_named(STRATEGIES, strategy)  # refused before the schema loads
        self.deps = build_deps(
            settings, schema=load_schema(schema_path), db_url=db_url, config=config
        )
        self.config = RunConfig.of(self.deps.settings)
        if models is not None:
            self.config = replace(self.config, models=models)

    def run(self, question: str, *, execute: bool = False) -> dict[str, Any]:
        response = ask(self.deps, question, self.config, strategy=self.strategy, execute=execute)
        return response.model_dump(mode="json")


# ---------------------------------------------------------------------- review
def open_answers(settings: Settings) -> AnswerRepository:
    """The answers waiting for a person, on the settings' database."""
    return AnswerRepository(open_stores(settings).engine)


def deps_of_answer(settings: Settings, stored: StoredAnswer) -> SQLDeps:
    """Deps on the schema (and database) the question was asked of; the newest stored (or
    the bundled) one when that schema is gone."""
    try:
        return build_deps(settings, schema_name=stored.schema_name)
    except NotFoundError:
        return build_deps(settings)


def settled_outcome(stored: StoredAnswer) -> DecideOutcome:
    return DecideOutcome(
        applied=False,
        outcome=outcome_text(stored.review_outcome, stored.corrected_query),
        decided_by=stored.decided_by or "",
        decided_at=stored.decided_at,
    )


def decide_review(
    settings: Settings, answer_id: int, action: str, *, edit: str | None, note: str, actor: str
) -> DecideOutcome:
    """Settle an answer waiting for a person, once: accept the draft query, correct it, or
    reject it. A query is kept only after it ran read-only on the question's database (or,
    with no database, passed validation): a failing one is refused with its reason and
    nothing changes."""
    answers = open_answers(settings)
    stored = answers.answer(answer_id)
    if stored is None:
        raise NotFoundError(f"No sql review item {answer_id}; open one from the inbox.")
    if stored.review_status != REVIEW_WAITING:
        return settled_outcome(stored)
    outcome = outcome_of(action)
    corrected = None
    if action in ("approve", "edit"):
        query = (stored.query if action == "approve" else edit) or ""
        if not query.strip():
            raise InputError("There is no query to keep; write the corrected SQL, or reject it.")
        check_query(deps_of_answer(settings, stored), query)
        corrected = query.strip() if action == "edit" else None
    applied = answers.settle_review(
        answer_id, outcome=outcome, corrected=corrected, decided_by=actor, note=note
    )
    return settle_once(
        applied,
        answers.answer(answer_id),
        settled_outcome,
        outcome=outcome,
        corrected=corrected,
        draft=stored.query,
        actor=actor,
        example_of=lambda sql: ExampleDraft(
            inputs={"question": stored.question, "schema": stored.schema_name},
            answer={"sql": sql},
        ),
    )


def check_query(deps: SQLDeps, query: str) -> ExecutionResult | None:
    """A reviewer's query, checked: run read-only where there is a database, else validated
    only; ``InputError`` with the reason when it fails."""
    if deps.db_url:
        return execute_validated(deps, query)
    result = validate_query(deps, query)
    if not result.valid:
        raise InputError(f"The query is not valid: {result.errors[0].message}")
    return None
