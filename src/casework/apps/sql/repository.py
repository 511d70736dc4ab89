"""Stored schemas: save, fetch by name, the newest as default."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, select

from casework.apps.sql.models import DatabaseSchema
from casework.apps.sql.schemas import parse_schema_document
from casework.apps.sql.tables import SchemaRow
from casework.errors import NotFoundError
from casework.stores.sql import session_scope

__all__ = ["SchemaRepository", "StoredSchema"]


@dataclass(frozen=True)
class StoredSchema:
    """A schema with the database URL it was loaded for."""

    schema: DatabaseSchema
    db_url: str | None
    loaded_at: datetime


class SchemaRepository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, schema: DatabaseSchema, *, db_url: str | None = None) -> None:
        """Insert or replace the schema of that name; keeps its db_url unless a new one is given."""
        with session_scope(self.engine) as s:
            row = s.get(SchemaRow, schema.name)
            if row is None:
                row = SchemaRow(name=schema.name)
                s.add(row)
            row.source = schema.source
            row.document = json.dumps(schema.to_document())
            row.db_url = db_url or row.db_url
            row.loaded_at = datetime.now(UTC)

    def get(self, name: str | None = None) -> StoredSchema:
        """The named schema, or the newest one when ``name`` is None."""
        with session_scope(self.engine) as s:
            if name is None:
                row = s.scalars(select(SchemaRow).order_by(SchemaRow.loaded_at.desc())).first()
                if row is None:
                    raise NotFoundError(
                        "No schema is loaded; run `casework sql schema load FILE` or "
                        "`casework sql db create --schema FILE`."
                    )
            else:
                row = s.get(SchemaRow, name)
                if row is None:
                    known = ", ".join(self.names()) or "none"
                    raise NotFoundError(f"No schema named {name!r}; loaded schemas: {known}.")
            tables = parse_schema_document(json.loads(row.document), origin=row.name)
            schema = DatabaseSchema(name=row.name, tables=tables, source=row.source)
            return StoredSchema(schema, row.db_url, row.loaded_at)

    def names(self) -> list[str]:
        with session_scope(self.engine) as s:
            return list(s.scalars(select(SchemaRow.name).order_by(SchemaRow.name)))
