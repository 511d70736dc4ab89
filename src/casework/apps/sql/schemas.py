"""Schema files in the original's format, and schemas reflected from a live database.

A file is a JSON object mapping table name -> ``{"category", "description", "fields":
[{"name", "type", "description"}]}``; ``schema_path`` is one such file or a folder of them
(merged; a table defined twice is an error). Types are SQL types (``VARCHAR(64)``,
``TIMESTAMP``, ``INTEGER``, ``BOOLEAN``, ``JSON``, ...); an unknown type is an error that
names the table, the field and the types we know.

A database URL's dialect and its SQLAlchemy URL (``dialect_of``, ``engine_url``) live here,
since reflection needs them; ``database`` (which builds and queries databases from schemas)
imports them from here and re-exports them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import ValidationError

from casework.apps.sql.models import ColumnSpec, DatabaseSchema, TableSpec
from casework.errors import ConfigError, InputError

__all__ = [
    "KNOWN_TYPES",
    "base_type",
    "dialect_of",
    "engine_url",
    "first_line",
    "load_schema",
    "parse_schema_document",
    "reflect_schema",
    "sqlalchemy_type",
]


def _numeric(args: list[str]) -> sa.Numeric:
    precision = int(args[0]) if args else None
    scale = int(args[1]) if len(args) > 1 else None
    return sa.Numeric(precision=precision, scale=scale)


# Base type (upper case, without length) -> how to build the SQLAlchemy type from its args.
_TYPES: dict[str, Any] = {
    "VARCHAR": lambda a: sa.String(int(a[0]) if a else None),
    "CHARACTER VARYING": lambda a: sa.String(int(a[0]) if a else None),
    "CHAR": lambda a: sa.String(int(a[0]) if a else 1),
    "TEXT": lambda a: sa.Text(),
    "STRING": lambda a: sa.Text(),
    "INTEGER": lambda a: sa.Integer(),
    "INT": lambda a: sa.Integer(),
    "SMALLINT": lambda a: sa.SmallInteger(),
    "BIGINT": lambda a: sa.BigInteger(),
    "SERIAL": lambda a: sa.Integer(),
    "BIGSERIAL": lambda a: sa.BigInteger(),
    "BOOLEAN": lambda a: sa.Boolean(),
    "BOOL": lambda a: sa.Boolean(),
    "TIMESTAMP": lambda a: sa.DateTime(),
    "TIMESTAMPTZ": lambda a: sa.DateTime(timezone=True),
    "DATETIME": lambda a: sa.DateTime(),
    "DATE": lambda a: sa.Date(),
    "TIME": lambda a: sa.Time(),
    "FLOAT": lambda a: sa.Float(),
    "REAL": lambda a: sa.Float(),
    "DOUBLE": lambda a: sa.Float(),
    "DOUBLE PRECISION": lambda a: sa.Float(),
    "NUMERIC": lambda a: _numeric(a),
    "DECIMAL": lambda a: _numeric(a),
    "JSON": lambda a: sa.JSON(),
    "JSONB": lambda a: sa.JSON(),
    "UUID": lambda a: sa.String(36),
    "INET": lambda a: sa.String(45),
    "BLOB": lambda a: sa.LargeBinary(),
    "BYTEA": lambda a: sa.LargeBinary(),
}
KNOWN_TYPES = tuple(_TYPES)

_TYPE_RE = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*(?:\(\s*(\d+(?:\s*,\s*\d+)?)\s*\))?\s*$")


def _split_type(text: str) -> tuple[str, list[str]] | None:
    m = _TYPE_RE.match(text)
    if not m:
        return None
    name = re.sub(r"\s+", " ", m.group(1).upper())
    name = {
        "TIMESTAMP WITH TIME ZONE": "TIMESTAMPTZ",
        "TIMESTAMP WITHOUT TIME ZONE": "TIMESTAMP",
    }.get(name, name)
    args = [a.strip() for a in m.group(2).split(",")] if m.group(2) else []
    return name, args


def base_type(text: str) -> str:
    """``VARCHAR(64)`` -> ``VARCHAR``; raises ``InputError`` for a type we do not know."""
    parts = _split_type(text)
    if parts is None or parts[0] not in _TYPES:
        raise InputError(f"Unknown SQL type {text!r}; known types: {', '.join(KNOWN_TYPES)}.")
    return parts[0]


def sqlalchemy_type(text: str) -> sa.types.TypeEngine:
    parts = _split_type(text)
    if parts is None or parts[0] not in _TYPES:
        raise InputError(f"Unknown SQL type {text!r}; known types: {', '.join(KNOWN_TYPES)}.")
    return _TYPES[parts[0]](parts[1])


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTABLE = re.compile(r'[^"\x00-\x1f]{1,128}')


def _name_issue(name: str, quoted: bool) -> str | None:
    """Why ``name`` cannot be a table's or a column's name; None when it can. A schema file's
    names are plain identifiers; a live database's (``quoted``) are queried in double quotes,
    so only a double quote or a control character in them is refused."""
    if not quoted:
        return None if _PLAIN.fullmatch(name) else "is not a plain SQL identifier"
    if _QUOTABLE.fullmatch(name):
        return None
    return "cannot be quoted in SQL (a double quote, a control character, or over 128 characters)"


def parse_schema_document(
    data: Any, *, origin: str = "schema", quoted: bool = False
) -> dict[str, TableSpec]:
    """Tables from one parsed JSON document; every error names what to fix. ``quoted``: the
    names are a live database's own (reflected), which may hold spaces."""
    if not isinstance(data, dict) or not data:
        raise InputError(
            f"{origin} must be a JSON object mapping table names to "
            '{"category", "description", "fields": [...]}.'
        )
    tables: dict[str, TableSpec] = {}
    for name, body in data.items():
        if issue := _name_issue(str(name), quoted):
            raise InputError(f"{origin}: table name {name!r} {issue}.")
        if not isinstance(body, dict) or not isinstance(body.get("fields"), list):
            raise InputError(f'{origin}: table {name!r} needs a "fields" list.')
        if not body["fields"]:
            raise InputError(f"{origin}: table {name!r} has no fields.")
        try:
            table = TableSpec(
                name=name,
                category=str(body.get("category") or ""),
                description=str(body.get("description") or ""),
                fields=[ColumnSpec.model_validate(f) for f in body["fields"]],
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise InputError(
                f"{origin}: table {name!r} has a field that is not "
                f'{{"name", "type", "description"}} ({where}: {err["msg"]}).'
            ) from exc
        seen: set[str] = set()
        for col in table.fields:
            if issue := _name_issue(col.name, quoted):
                raise InputError(f"{origin}: field {name}.{col.name!r} {issue}.")
            if col.name.lower() in seen:
                raise InputError(f"{origin}: field {name}.{col.name} is defined twice.")
            seen.add(col.name.lower())
            try:
                base_type(col.type)
            except InputError:
                raise InputError(
                    f"{origin}: field {name}.{col.name} has unknown type {col.type!r}; "
                    f"use one of {', '.join(KNOWN_TYPES)}."
                ) from None
        tables[name] = table
    return tables


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a UTF-8 text file.") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}).") from None


def load_schema(path: Path | str, *, name: str | None = None) -> DatabaseSchema:
    """A schema from one JSON file or every ``*.json`` file of a folder."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise InputError(f"{path} holds no *.json schema files.")
    elif path.is_file():
        files = [path]
    else:
        raise InputError(f"Schema path {path} does not exist; give a JSON file or a folder.")
    tables: dict[str, TableSpec] = {}
    for file in files:
        for table_name, table in parse_schema_document(_read_json(file), origin=str(file)).items():
            if table_name in tables:
                raise InputError(f"Table {table_name!r} is defined twice (again in {file}).")
            tables[table_name] = table
    return DatabaseSchema(name=name or path.stem, tables=tables, source=str(path))


def _type_text(column_type: Any) -> str:
    """A reflected SQLAlchemy type in the schema file's vocabulary."""
    text = str(column_type.compile()) if hasattr(column_type, "compile") else str(column_type)
    parts = _split_type(text)
    if parts and parts[0] in _TYPES:
        return text.upper()
    generic = type(column_type).__mro__
    for cls, name in (
        (sa.Boolean, "BOOLEAN"),
        (sa.DateTime, "TIMESTAMP"),
        (sa.Date, "DATE"),
        (sa.Integer, "INTEGER"),
        (sa.Float, "FLOAT"),
        (sa.Numeric, "NUMERIC"),
        (sa.JSON, "JSON"),
        (sa.String, "TEXT"),
    ):
        if cls in generic:
            return name
    return "TEXT"


# ---------------------------------------------------------------------------- live databases
def dialect_of(url: str) -> str:
    """The sqlglot dialect queries are transpiled to for this database."""
    if url.startswith("sqlite"):
        return "sqlite"
    if url.startswith(("postgres", "postgresql")):
        return "postgres"
    raise InputError(f"Unsupported database URL {url!r}: use sqlite:///PATH or postgresql://…")


def engine_url(url: str) -> str:
    """The SQLAlchemy URL with the installed PostgreSQL driver (psycopg 3)."""
    if url.startswith("postgres://"):
        url = url.replace("postgres://", "postgresql://", 1)
    if url.startswith("postgresql://"):
        url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    return url


def reflect_schema(url: str, *, name: str | None = None) -> DatabaseSchema:
    """The schema of a live database (SQLAlchemy inspection); comments become descriptions.
    Its names are checked as a stored schema reads them back, so what is stored loads."""
    from sqlalchemy.exc import ArgumentError, DatabaseError, NoSuchModuleError, OperationalError

    from casework.stores.sql import external_engine

    dialect_of(url)  # SQLite or PostgreSQL only
    try:
        engine = external_engine(engine_url(url))
    except (ArgumentError, NoSuchModuleError) as exc:
        raise InputError(f"{url!r} is not a database URL SQLAlchemy can open ({exc}).") from None
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else None
    if path is not None and not Path(path).is_file():
        raise InputError(f"No SQLite database at {path}.")
    try:
        tables = _inspect_tables(engine)
    except OperationalError as exc:
        raise ConfigError(
            f"The database at {url} is not reachable: {first_line(exc.orig)}."
        ) from None
    except DatabaseError as exc:
        if path is not None:
            raise InputError(_not_sqlite(path, exc.orig)) from None
        raise InputError(f"The database at {url} cannot be read: {first_line(exc.orig)}.") from None
    if not tables:
        raise InputError(f"The database at {url} has no tables to reflect.")
    schema = DatabaseSchema(name=name or _name_from_url(url), tables=tables, source=url)
    parse_schema_document(schema.to_document(), origin=url, quoted=True)
    return schema


def _not_sqlite(path: str, error: object) -> str:
    return f"{path} is not a SQLite database ({first_line(error)}); give a SQLite file."


def _inspect_tables(engine: sa.Engine) -> dict[str, TableSpec]:
    """Every table of the database behind ``engine`` (views are not tables)."""
    inspector = sa.inspect(engine)
    tables: dict[str, TableSpec] = {}
    for table_name in inspector.get_table_names():
        try:
            comment = (inspector.get_table_comment(table_name) or {}).get("text") or ""
        except NotImplementedError:  # SQLite keeps no comments
            comment = ""
        fields = [
            ColumnSpec(
                name=c["name"], type=_type_text(c["type"]), description=c.get("comment") or ""
            )
            for c in inspector.get_columns(table_name)
        ]
        tables[table_name] = TableSpec(
            name=table_name, category="", description=comment, fields=fields
        )
    return tables


def _name_from_url(url: str) -> str:
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return Path(tail).stem or "reflected"


def first_line(error: object) -> str:
    """A driver's error as one sentence (psycopg adds hint lines)."""
    return (
        str(error).strip().splitlines()[0].rstrip(".")
        if str(error).strip()
        else type(error).__name__
    )
