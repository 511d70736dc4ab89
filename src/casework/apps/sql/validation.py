"""Structural validation of one SQL query with sqlglot, against a loaded schema.

Checks, in order: not empty, parses, exactly one statement, read-only (a query, no DDL/DML,
PRAGMA, ATTACH, COPY, transactions, locks or functions with side effects), every table
exists (no system catalogs), every column resolves (sqlglot ``qualify``), no sensitive
column is returned, and the query transpiled to the target database's dialect actually
compiles there (SQLite: ``EXPLAIN`` on an empty in-memory copy of the schema). Errors carry
suggestions: the closest table or column names (rapidfuzz).

PostgreSQL is the default input dialect. sqlglot writes PostgreSQL date arithmetic for SQLite
as ``CURRENT_TIMESTAMP - INTERVAL '7' DAYS``, which SQLite cannot run, so interval
arithmetic, ``DATE_TRUNC`` and ``EXTRACT`` are rewritten here into SQLite's ``DATETIME``
modifiers and ``STRFTIME``.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from typing import Any

import sqlglot
from rapidfuzz import fuzz, process
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError, SqlglotError
from sqlglot.optimizer.qualify import qualify

from casework.apps.sql.models import DatabaseSchema, ValidationIssue, ValidationResult
from casework.apps.sql.schemas import base_type

__all__ = [
    "MAX_QUERY_CHARS",
    "SIDE_EFFECT_FUNCTIONS",
    "is_sensitive",
    "suggest",
    "to_dialect",
    "validate_sql",
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


# ------------------------------------------------------------------ dialect rewriting
_UNIT_RE = re.compile(r"(-?\d+(?:\.\d+)?)\s*([a-z]+)")
_SQLITE_UNITS = {
    "second": "seconds", "sec": "seconds", "minute": "minutes", "min": "minutes",
    "hour": "hours", "day": "days", "week": "weeks", "month": "months", "mon": "months",
    "year": "years",
}  # fmt: skip


def _interval_modifiers(interval: exp.Interval, sign: int) -> list[str] | None:
    """``INTERVAL '1 day 2 hours'`` -> ``['+1 days', '+2 hours']`` (weeks become days)."""
    value = interval.this.name if interval.this is not None else ""
    unit_node = interval.args.get("unit")
    unit = unit_node.name if unit_node is not None else ""
    text = f"{value} {unit}".strip().lower()
    parts = _UNIT_RE.findall(text)
    if not parts:
        return None
    modifiers = []
    for number, raw_unit in parts:
        unit_name = _SQLITE_UNITS.get(raw_unit.rstrip("s"))
        if unit_name is None:
            return None
        amount = float(number) * sign
        if unit_name == "weeks":
            amount, unit_name = amount * 7, "days"
        amount_text = f"{amount:+g}"
        modifiers.append(f"{amount_text} {unit_name}")
    return modifiers


def _is_date_only(node: exp.Expr) -> bool:
    return isinstance(node, exp.CurrentDate) or (
        isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DATE
    )


_TRUNC_FORMATS = {
    "second": "%Y-%m-%d %H:%M:%S", "minute": "%Y-%m-%d %H:%M:00", "hour": "%Y-%m-%d %H:00:00",
    "day": "%Y-%m-%d 00:00:00", "month": "%Y-%m-01 00:00:00", "year": "%Y-01-01 00:00:00",
}  # fmt: skip
_EXTRACT_FORMATS = {
    "year": "%Y", "month": "%m", "day": "%d", "hour": "%H", "minute": "%M", "second": "%S",
    "dow": "%w", "doy": "%j", "epoch": "%s", "week": "%W",
}  # fmt: skip


def _unit_name(node: Any) -> str:
    if node is None:
        return ""
    name = node.name if isinstance(node, exp.Expr) else str(node)
    return name.lower().strip("'\"").rstrip("s") if name.lower() != "dow" else "dow"


def _sqlite_rewrite(node: exp.Expr) -> exp.Expr:
    """One node of PostgreSQL date arithmetic as SQLite can run it."""
    if isinstance(node, exp.Sub | exp.Add) and isinstance(node.expression, exp.Interval):
        sign = -1 if isinstance(node, exp.Sub) else 1
        modifiers = _interval_modifiers(node.expression, sign)
        if modifiers is not None:
            func = "DATE" if _is_date_only(node.this) else "DATETIME"
            return exp.Anonymous(
                this=func, expressions=[node.this, *[exp.Literal.string(m) for m in modifiers]]
            )
    if isinstance(node, exp.Add) and isinstance(node.this, exp.Interval):
        modifiers = _interval_modifiers(node.this, 1)
        if modifiers is not None:
            return exp.Anonymous(
                this="DATETIME",
                expressions=[node.expression, *[exp.Literal.string(m) for m in modifiers]],
            )
    if isinstance(node, exp.DateAdd | exp.DateSub | exp.TsOrDsAdd) and isinstance(
        node.expression, exp.Literal
    ):
        sign = -1 if isinstance(node, exp.DateSub) else 1
        unit = _unit_name(node.args.get("unit")) or "day"
        interval = exp.Interval(this=node.expression, unit=exp.var(unit))
        modifiers = _interval_modifiers(interval, sign)
        if modifiers is not None:
            return exp.Anonymous(
                this="DATETIME",
                expressions=[node.this, *[exp.Literal.string(m) for m in modifiers]],
            )
    if isinstance(node, exp.TimestampTrunc | exp.DateTrunc):
        unit = _unit_name(node.args.get("unit"))
        if unit == "week":  # Monday of that week
            return exp.Anonymous(
                this="DATETIME",
                expressions=[
                    node.this,
                    exp.Literal.string("weekday 0"),
                    exp.Literal.string("-6 days"),
                    exp.Literal.string("start of day"),
                ],
            )
        fmt = _TRUNC_FORMATS.get(unit)
        if fmt:
            return exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), node.this])
    if isinstance(node, exp.Extract):
        fmt = _EXTRACT_FORMATS.get(_unit_name(node.this))
        if fmt:
            return exp.cast(
                exp.Anonymous(
                    this="STRFTIME", expressions=[exp.Literal.string(fmt), node.expression]
                ),
                exp.DataType.Type.INT,
            )
    return node


def to_dialect(tree: exp.Expr, dialect: str) -> str:
    """The query as ``dialect`` writes it, with SQLite's date arithmetic where needed."""
    if dialect == "sqlite":
        tree = tree.copy().transform(_sqlite_rewrite)
    return tree.sql(dialect=dialect)


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

    if not text:
        return fail(
            ValidationIssue(kind="empty", message="The query is empty; write one SELECT statement.")
        )
    if len(text) > MAX_QUERY_CHARS:
        return fail(
            ValidationIssue(
                kind="syntax", message=f"The query is longer than {MAX_QUERY_CHARS} characters."
            )
        )
    statements = _split_statements(text)
    blocked = sorted({k for s in statements if (k := _first_keyword(s)) in _WRITE_KEYWORDS})
    if blocked:
        return fail(
            ValidationIssue(
                kind="read_only",
                message=f"Only read-only SELECT queries are allowed; found {', '.join(blocked)}.",
                suggestions=["Write a single SELECT (WITH ... SELECT is fine)."],
            )
        )

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
        return fail(
            ValidationIssue(
                kind="syntax", message=f"The query does not parse: {parse_error.rstrip('.')}."
            )
        )
    trees = [t for t in parsed if t is not None]
    if len(trees) != 1:
        return fail(
            ValidationIssue(
                kind="statements",
                message=f"Send exactly one statement; found {len(trees)}.",
                suggestions=["Combine the parts with JOINs, subqueries or UNION."],
            )
        )
    tree = trees[0]
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
        error = _sqlite_compile_error(schema, transpiled)
        if error is not None and read != "sqlite":
            # Perhaps it was written for SQLite already: try reading it as SQLite.
            try:
                native = sqlglot.parse_one(text, read="sqlite").sql(dialect="sqlite")
                if _sqlite_compile_error(schema, native) is None:
                    transpiled, error = native, None
            except SqlglotError:
                pass
        if error is not None:
            return fail(
                ValidationIssue(
                    kind="syntax",
                    message=f"SQLite cannot run the query ({error}).",
                    suggestions=[
                        "Use standard SQL functions; dates compare as 'YYYY-MM-DD HH:MM:SS' text."
                    ],
                ),
                tables=tables,
            )
    return ValidationResult(
        query=query, valid=True, tables=tables, transpiled=transpiled, dialect=dialect
    )
