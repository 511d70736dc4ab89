"""Structural validation of one SQL query with sqlglot, against a loaded schema.

Checks, in order: not empty, parses, exactly one statement, read-only (a query, no DDL/DML,
PRAGMA, ATTACH, COPY, transactions, locks or functions with side effects), every table
exists (no system catalogs), every column resolves (sqlglot ``qualify``), no sensitive
column is returned, and the query transpiled to the target database's dialect actually
compiles there (SQLite: ``EXPLAIN`` on an empty in-memory copy of the schema). Errors carry
suggestions: the closest table or column names (rapidfuzz). The query is written in the
target's dialect by ``transpile``.
"""

from __future__ import annotations

import re
import sqlite3
import threading

import sqlglot
from rapidfuzz import fuzz, process
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError, SqlglotError
from sqlglot.optimizer.qualify import qualify

from casework.apps.sql.models import DatabaseSchema, ValidationIssue, ValidationResult
from casework.apps.sql.schemas import base_type
from casework.apps.sql.transpile import to_dialect

__all__ = [
    "MAX_QUERY_CHARS",
    "SIDE_EFFECT_FUNCTIONS",
    "is_sensitive",
    "suggest",
    "validate_sql",
    "write_keywords",
]

MAX_QUERY_CHARS = 20_000
SUGGESTION_CUTOFF = 60
"""Minimum rapidfuzz ratio (0-100) for a name to be suggested."""

_WRITE_KEYWORDS = {
    "INSERT", "UPDATE", "DELETE", "DROP", "CREATE", "ALTER", "TRUNCATE", "REPLACE", "MERGE",
    "UPSERT", "GRANT", "REVOKE", "ATTACH", "DETACH", "PRAGMA", "COPY", "VACUUM", "REINDEX",
    "ANALYZE", "CALL", "EXEC", "EXECUTE", "DO", "SET", "RESET", "BEGIN", "COMMIT", "ROLLBACK",
    "SAVEPOINT", "RELEASE", "LOCK", "UNLISTEN", "LISTEN", "NOTIFY", "LOAD", "COMMENT",
    "REFRESH", "CLUSTER", "DISCARD", "PREPARE", "DEALLOCATE", "SECURITY", "IMPORT",
}  # fmt: skip
_WRITE_NODES: tuple[type[exp.Expr], ...] = (
    exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
    exp.Command, exp.Pragma, exp.Copy, exp.Into, exp.Transaction, exp.Commit, exp.Rollback,
    exp.Set, exp.Grant, exp.Lock, exp.TruncateTable, exp.Use,
)  # fmt: skip
SIDE_EFFECT_FUNCTIONS = frozenset(
    ["pg_sleep", "pg_sleep_for", "pg_sleep_until", "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_advisory_lock", "pg_advisory_xact_lock", "pg_notify", "set_config", "nextval", "setval", "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_from_bytea", "dblink", "dblink_exec", "dblink_connect", "query_to_xml", "pg_switch_wal", "pg_create_restore_point", "txid_current", "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "randomblob", "zeroblob"]
)  # fmt: skip
_SYSTEM_PREFIXES = ("sqlite_", "pg_", "information_schema")
_SENSITIVE_NAME = re.compile(
    r"(password|passwd|secret|ssn|social_security|api_key|token|credit_card|card_number|cvv|private_key)",
    re.IGNORECASE,
)


def is_sensitive(name: str, description: str) -> bool:
    """A column a query must not return: marked sensitive in its description, or named so."""
    return bool(re.match(r"\s*sensitive\b", description, re.IGNORECASE)) or bool(
        _SENSITIVE_NAME.search(name)
    )


def suggest(name: str, choices: list[str], limit: int = 3) -> list[str]:
    """The closest names (rapidfuzz ratio ≥ ``SUGGESTION_CUTOFF``), best first; a
    ``table.column`` choice is compared by its column part."""
    found = process.extract(
        name.lower(), {c: c.rsplit(".", 1)[-1].lower() for c in choices}, scorer=fuzz.ratio,
        limit=limit, score_cutoff=SUGGESTION_CUTOFF,
    )  # fmt: skip
    return [key for _, _, key in found]


# ------------------------------------------------------------------ schema helpers
_SQLGLOT_TYPES = {
    "VARCHAR": "TEXT", "CHARACTER VARYING": "TEXT", "CHAR": "TEXT", "TEXT": "TEXT",
    "STRING": "TEXT", "UUID": "TEXT", "INET": "TEXT", "JSON": "JSON", "JSONB": "JSON",
    "BOOLEAN": "BOOLEAN", "BOOL": "BOOLEAN", "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMPTZ": "TIMESTAMP", "DATETIME": "TIMESTAMP", "DATE": "DATE", "TIME": "TIME",
    "FLOAT": "DOUBLE", "REAL": "DOUBLE", "DOUBLE": "DOUBLE", "DOUBLE PRECISION": "DOUBLE",
    "NUMERIC": "DOUBLE", "DECIMAL": "DOUBLE", "BLOB": "BINARY", "BYTEA": "BINARY",
}  # fmt: skip


def _mapping(schema: DatabaseSchema) -> dict[str, object]:
    return {
        name: {c.name: _SQLGLOT_TYPES.get(base_type(c.type), "INT") for c in t.fields}
        for name, t in schema.tables.items()
    }


_sqlite_shadows: dict[int, sqlite3.Connection] = {}
_shadow_lock = threading.Lock()


def _sqlite_shadow(schema: DatabaseSchema) -> sqlite3.Connection:
    """An empty in-memory SQLite database with the schema's tables, to compile queries on."""
    key = hash(
        tuple((n, tuple((c.name, c.type) for c in t.fields)) for n, t in schema.tables.items())
    )
    with _shadow_lock:
        conn = _sqlite_shadows.get(key)
        if conn is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            for name, table in schema.tables.items():
                cols = ", ".join(
                    f'"{c.name}" {_SQLGLOT_TYPES.get(base_type(c.type), "INTEGER")}'
                    for c in table.fields
                )
                conn.execute(f'CREATE TABLE "{name}" ({cols})')
            _sqlite_shadows[key] = conn
        return conn


def _sqlite_compile_error(schema: DatabaseSchema, sql: str) -> str | None:
    conn = _sqlite_shadow(schema)
    with _shadow_lock:
        try:
            conn.execute(f"EXPLAIN {sql}").fetchall()
        except sqlite3.Error as exc:
            return str(exc)
    return None


# ------------------------------------------------------------------ checks
def _first_keyword(statement: str) -> str:
    stripped = re.sub(r"^(\s|--[^\n]*\n|/\*.*?\*/)+", "", statement, flags=re.DOTALL)
    m = re.match(r"[A-Za-z]+", stripped)
    return m.group(0).upper() if m else ""


def _split_statements(query: str) -> list[str]:
    return [s for s in re.split(r";\s*", query.strip()) if s.strip()]


def write_keywords(query: str) -> list[str]:
    """The keywords of the statements in ``query`` that write (DELETE, DROP, ATTACH, ...),
    found without a schema; none for a query that only reads."""
    statements = _split_statements(query)
    return sorted({k for s in statements if (k := _first_keyword(s)) in _WRITE_KEYWORDS})


def _read_only_issues(tree: exp.Expr) -> list[ValidationIssue]:
    issues: list[ValidationIssue] = []
    if not isinstance(tree, exp.Query):
        kind = type(tree).__name__.upper()
        return [
            ValidationIssue(
                kind="read_only",
                message=f"Only read-only SELECT queries are allowed; this is a {kind} statement.",
                suggestions=["Write a single SELECT (WITH ... SELECT is fine)."],
            )
        ]
    for node in tree.walk():
        if isinstance(node, _WRITE_NODES):
            issues.append(
                ValidationIssue(
                    kind="read_only",
                    message=f"Only read-only queries are allowed; found {type(node).__name__.upper()}.",
                    suggestions=["Remove the writing part; SELECT what the question asks."],
                )
            )
        elif isinstance(node, exp.Func):
            name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            if name in SIDE_EFFECT_FUNCTIONS:
                issues.append(
                    ValidationIssue(
                        kind="read_only",
                        message=f"Function {name}() has side effects or reads files and is not allowed.",
                    )
                )
    return issues


def _table_issues(
    tree: exp.Expr, schema: DatabaseSchema
) -> tuple[list[ValidationIssue], list[str]]:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    issues: list[ValidationIssue] = []
    used: list[str] = []
    names = list(schema.tables)
    for table in tree.find_all(exp.Table):
        name = table.name
        if not name:
            continue  # a table function
        qualifier = table.db.lower()
        if name.lower() in ctes and not qualifier:
            continue
        if qualifier in (
            "information_schema",
            "pg_catalog",
            "sqlite_master",
        ) or name.lower().startswith(_SYSTEM_PREFIXES):
            issues.append(
                ValidationIssue(
                    kind="table",
                    message=f"System catalog {table.sql()} is not part of the schema; query the schema's tables.",
                )
            )
            continue
        spec = schema.table(name)
        if spec is None:
            issues.append(
                ValidationIssue(
                    kind="table",
                    message=f"Table {name!r} does not exist.",
                    suggestions=suggest(name, names),
                )
            )
        elif spec.name not in used:
            used.append(spec.name)
    return issues, used


_COLUMN_ERR = re.compile(r"Column '([^']+)' could not be resolved|Unknown column: (\S+)")


def _column_issues(
    tree: exp.Expr, schema: DatabaseSchema, tables: list[str], dialect: str
) -> tuple[list[ValidationIssue], exp.Expr | None]:
    try:
        qualified = qualify(
            tree.copy(), schema=_mapping(schema), dialect=dialect, validate_qualify_columns=True,
            quote_identifiers=False,
        )  # fmt: skip
    except (OptimizeError, SqlglotError) as exc:
        text = str(exc).splitlines()[0]
        m = _COLUMN_ERR.search(text)
        column = (m.group(1) or m.group(2)) if m else None
        if column is None:
            return [
                ValidationIssue(kind="column", message=f"Columns could not be resolved: {text}.")
            ], None
        choices = [f"{t}.{c.name}" for t in tables for c in schema.tables[t].fields]
        bare = column.split(".")[-1]
        hits = suggest(bare, choices) if choices else []
        in_tables = f" in {', '.join(tables)}" if tables else ""
        return [
            ValidationIssue(
                kind="column",
                message=f"Column {column!r} does not exist{in_tables}.",
                suggestions=hits,
            )
        ], None
    return [], qualified


def _sensitive_issues(qualified: exp.Expr, schema: DatabaseSchema) -> list[ValidationIssue]:
    issues: list[ValidationIssue] = []
    seen: set[str] = set()
    for select in qualified.find_all(exp.Select):
        for projection in select.expressions:
            for column in projection.find_all(exp.Column):
                if column.find_ancestor(exp.AggFunc) is not None:
                    continue  # COUNT(phone_number) reveals no value
                table = _column_table(column, select, schema)
                spec = schema.table(table) if table else None
                col = spec.column(column.name) if spec else None
                if col is None or not is_sensitive(col.name, col.description):
                    continue
                key = f"{spec.name}.{col.name}"  # type: ignore[union-attr]
                if key not in seen:
                    seen.add(key)
                    issues.append(
                        ValidationIssue(
                            kind="sensitive",
                            message=f"Column {key} holds sensitive data and must not be returned.",
                            suggestions=[
                                "Select only the columns the question needs (no SELECT *)."
                            ],
                        )
                    )
    return issues


def _column_table(column: exp.Column, select: exp.Select, schema: DatabaseSchema) -> str | None:
    alias = column.table
    if not alias:
        return None
    for table in select.find_all(exp.Table):
        if table.alias_or_name == alias:
            return table.name
    return alias if schema.table(alias) else None


def validate_sql(
    query: str,
    schema: DatabaseSchema,
    *,
    dialect: str = "sqlite",
    read: str = "postgres",
) -> ValidationResult:
    """Structural validation; ``transpiled`` is the query to run on ``dialect`` when valid."""
    text = (query or "").strip().rstrip(";").strip()

    def fail(*issues: ValidationIssue, tables: list[str] | None = None) -> ValidationResult:
        return ValidationResult(
            query=query or "",
            valid=False,
            errors=list(issues),
            tables=tables or [],
            dialect=dialect,
        )

    refused = _text_issue(text)
    if refused is not None:
        return fail(refused)
    parsed = _parse_one(text, read, dialect)
    if isinstance(parsed, ValidationIssue):
        return fail(parsed)
    tree, read = parsed
    issues = _read_only_issues(tree)
    if issues:
        return fail(*issues)
    table_issues, tables = _table_issues(tree, schema)
    if table_issues:
        return fail(*table_issues, tables=tables)
    column_issues, qualified = _column_issues(tree, schema, tables, read)
    if column_issues or qualified is None:
        return fail(*column_issues, tables=tables)
    sensitive = _sensitive_issues(qualified, schema)
    if sensitive:
        return fail(*sensitive, tables=tables)
    transpiled = to_dialect(tree, dialect)
    if dialect == "sqlite":
        transpiled, issue = _runs_on_sqlite(text, transpiled, schema, read)
        if issue is not None:
            return fail(issue, tables=tables)
    return ValidationResult(
        query=query, valid=True, tables=tables, transpiled=transpiled, dialect=dialect
    )


def _text_issue(text: str) -> ValidationIssue | None:
    """What is wrong with the text before it is parsed: empty, too long, or a write."""
    if not text:
        return ValidationIssue(
            kind="empty", message="The query is empty; write one SELECT statement."
        )
    if len(text) > MAX_QUERY_CHARS:
        return ValidationIssue(
            kind="syntax", message=f"The query is longer than {MAX_QUERY_CHARS} characters."
        )
    blocked = write_keywords(text)
    if blocked:
        return ValidationIssue(
            kind="read_only",
            message=f"Only read-only SELECT queries are allowed; found {', '.join(blocked)}.",
            suggestions=["Write a single SELECT (WITH ... SELECT is fine)."],
        )
    return None


def _parse_one(text: str, read: str, dialect: str) -> tuple[exp.Expr, str] | ValidationIssue:
    """The one statement's tree and the dialect it parsed in (``read``, else ``dialect``)."""
    reads = [read] + ([dialect] if dialect != read else [])
    parsed: list[exp.Expr | None] | None = None
    parse_error = ""
    for reader in reads:
        try:
            parsed = sqlglot.parse(text, read=reader)
            read = reader
            break
        except (ParseError, SqlglotError) as exc:
            parse_error = parse_error or str(exc).splitlines()[0]
    if parsed is None:
        return ValidationIssue(
            kind="syntax", message=f"The query does not parse: {parse_error.rstrip('.')}."
        )
    trees = [t for t in parsed if t is not None]
    if len(trees) != 1:
        return ValidationIssue(
            kind="statements",
            message=f"Send exactly one statement; found {len(trees)}.",
            suggestions=["Combine the parts with JOINs, subqueries or UNION."],
        )
    return trees[0], read


def _runs_on_sqlite(
    text: str, transpiled: str, schema: DatabaseSchema, read: str
) -> tuple[str, ValidationIssue | None]:
    """The query SQLite compiles (the transpiled one, else the text read as SQLite), or why not."""
    error = _sqlite_compile_error(schema, transpiled)
    if error is not None and read != "sqlite":
        # Perhaps it was written for SQLite already: try reading it as SQLite.
        try:
            native = sqlglot.parse_one(text, read="sqlite").sql(dialect="sqlite")
            if _sqlite_compile_error(schema, native) is None:
                transpiled, error = native, None
        except SqlglotError:
            pass
    if error is None:
        return transpiled, None
    return transpiled, ValidationIssue(
        kind="syntax",
        message=f"SQLite cannot run the query ({error}).",
        suggestions=["Use standard SQL functions; dates compare as 'YYYY-MM-DD HH:MM:SS' text."],
    )
