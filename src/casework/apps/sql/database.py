"""The queried database: create it from a schema with synthetic rows, and run queries on it
read-only.

Creation is all or nothing: a new SQLite file is built beside its target and renamed into
place; PostgreSQL (transactional DDL) is filled in one transaction.

Execution is read-only at the connection, not only in the validator: SQLite opens the file
with ``mode=ro`` and installs an authorizer that denies every write, attach and pragma;
PostgreSQL runs inside a ``READ ONLY`` transaction with a statement timeout that is rolled
back. Both stop after ``max_rows`` rows and after ``timeout_seconds``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from casework.apps.sql.models import DatabaseSchema, ExecutionResult
from casework.apps.sql.schemas import dialect_of, engine_url, first_line, sqlalchemy_type
from casework.apps.sql.synth import generate_rows
from casework.errors import ConfigError, InputError

__all__ = [
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT_SECONDS",
    "create_database",
    "default_db_url",
    "dialect_of",
    "engine_url",
    "execute_read_only",
    "metadata_for",
    "sqlite_path",
    "stored_url",
]

DEFAULT_MAX_ROWS = 200
DEFAULT_TIMEOUT_SECONDS = 10.0


def default_db_url(home: Path, schema_name: str) -> str:
    return f"sqlite:///{(home / 'sql' / f'{schema_name}.sqlite').as_posix()}"


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///PATH`` URL, or None for another database."""
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///"))
    return None


def stored_url(url: str, *, exists: bool = True) -> str:
    """A database URL as it is stored with a schema: SQLite or PostgreSQL only, a SQLite file's
    path made absolute (so a later command run from another folder finds the same file) and,
    with ``exists``, the file there; one sentence of InputError otherwise."""
    dialect_of(url)
    path = sqlite_path(url)
    if path is None or str(path) == ":memory:":
        return url
    if exists and not path.is_file():
        raise InputError(f"No SQLite database at {path}.")
    return f"sqlite:///{path.resolve().as_posix()}"


def metadata_for(schema: DatabaseSchema) -> sa.MetaData:
    """SQLAlchemy tables for a schema; a field named ``id`` is the primary key."""
    metadata = sa.MetaData()
    for name, table in schema.tables.items():
        sa.Table(
            name,
            metadata,
            *[
                sa.Column(c.name, sqlalchemy_type(c.type), primary_key=c.name.lower() == "id")
                for c in table.fields
            ],
        )
    return metadata


def _fill(
    engine: sa.Engine,
    schema: DatabaseSchema,
    rows: int,
    seed: int,
    anchor: datetime | None,
    replace: bool,
) -> dict[str, int]:
    metadata = metadata_for(schema)
    data = generate_rows(schema, rows, seed=seed, anchor=anchor)
    with engine.begin() as conn:
        existing = set(sa.inspect(conn).get_table_names())
        clash = sorted(existing & set(schema.tables))
        if clash and not replace:
            raise InputError(
                f"Tables already exist in the database ({', '.join(clash[:5])}); "
                "pass --replace to recreate them."
            )
        if clash:
            metadata.drop_all(conn, tables=[metadata.tables[n] for n in clash])
        metadata.create_all(conn)
        for name, table_rows in data.items():
            conn.execute(metadata.tables[name].insert(), table_rows)
    return {name: len(r) for name, r in data.items()}


def create_database(
    schema: DatabaseSchema,
    url: str,
    *,
    rows: int = 100,
    seed: int = 0,
    anchor: datetime | None = None,
    replace: bool = False,
) -> dict[str, int]:
    """Create the schema's tables at ``url`` and fill them; returns rows per table."""
    if rows < 1 or rows > 1_000_000:
        raise InputError("--rows must be between 1 and 1000000.")
    dialect_of(url)
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and not replace:
            raise InputError(f"{path} already exists; pass --replace to rebuild it.")
        tmp = path.with_name(path.name + ".tmp")
        tmp.unlink(missing_ok=True)
        engine = sa.create_engine(f"sqlite:///{tmp.as_posix()}")
        try:
            counts = _fill(engine, schema, rows, seed, anchor, replace=False)
        except BaseException:
            engine.dispose()
            tmp.unlink(missing_ok=True)
            raise
        engine.dispose()
        os.replace(tmp, path)
        return counts
    engine = sa.create_engine(engine_url(url), pool_pre_ping=True)
    try:
        return _fill(engine, schema, rows, seed, anchor, replace)
    except sa.exc.OperationalError as exc:
        raise ConfigError(
            f"The database at {url} is not reachable: {first_line(exc.orig)}."
        ) from None
    finally:
        engine.dispose()


# ------------------------------------------------------------------ read-only execution
# Everything a plain SELECT needs; anything else (writes, DDL, ATTACH, PRAGMA, transactions)
# is denied by SQLite itself before the statement runs.
_SQLITE_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}
_SQLITE_ALLOWED.add(getattr(sqlite3, "SQLITE_RECURSIVE", 33))
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def _sqlite_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
) -> int:
    if action not in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def open_sqlite_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write: ``mode=ro`` plus an authorizer denying writes."""
    if not path.is_file():
        raise InputError(f"No SQLite database at {path}; create one with `casework sql db create`.")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    conn.set_authorizer(_sqlite_authorizer)
    return conn


def _run_sqlite(
    path: Path, sql: str, max_rows: int, timeout: float
) -> tuple[list[str], list[list[Any]], bool]:
    conn = open_sqlite_read_only(path)
    deadline = time.monotonic() + timeout
    # Called every 10k VM steps: a non-zero return aborts the statement (timeout).
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        cur = conn.execute(sql)
        columns = [d[0] for d in cur.description or []]
        fetched = cur.fetchmany(max_rows + 1)
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            raise InputError(f"The query ran longer than {timeout:g} s and was stopped.") from None
        raise InputError(f"The database refused the query: {exc}.") from None
    except sqlite3.DatabaseError as exc:
        raise InputError(f"The database refused the query: {exc}.") from None
    finally:
        conn.close()
    return columns, [list(r) for r in fetched[:max_rows]], len(fetched) > max_rows


def _run_postgres(
    url: str, sql: str, max_rows: int, timeout: float
) -> tuple[list[str], list[list[Any]], bool]:
    from casework.stores.sql import external_engine

    engine = external_engine(engine_url(url))  # one pool per database, shared by every case
    try:
        with engine.connect() as conn:
            trans = conn.begin()
            try:
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(timeout * 1000)}")
                result = conn.exec_driver_sql(sql)
                columns = list(result.keys())
                fetched = result.fetchmany(max_rows + 1)
            finally:
                trans.rollback()
    except sa.exc.OperationalError as exc:
        text = str(exc.orig)
        if "statement timeout" in text or "canceling statement" in text:
            raise InputError(f"The query ran longer than {timeout:g} s and was stopped.") from None
        raise ConfigError(
            f"The database at {url} is not reachable: {first_line(exc.orig)}."
        ) from None
    except sa.exc.DBAPIError as exc:
        raise InputError(f"The database refused the query: {first_line(exc.orig)}.") from None
    return columns, [list(r) for r in fetched[:max_rows]], len(fetched) > max_rows


def execute_read_only(
    url: str,
    sql: str,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> ExecutionResult:
    """Run one already validated query on a connection that refuses writes by itself."""
    started = time.perf_counter()
    path = sqlite_path(url)
    if path is not None:
        columns, rows, truncated = _run_sqlite(path, sql, max_rows, timeout_seconds)
    else:
        dialect_of(url)
        columns, rows, truncated = _run_postgres(url, sql, max_rows, timeout_seconds)
    return ExecutionResult(
        columns=columns,
        rows=rows,
        truncated=truncated,
        seconds=round(time.perf_counter() - started, 4),
    )
