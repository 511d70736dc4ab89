"""The deps every run shares: the schema, the database it describes and the settings (a run's
models come in its ``RunConfig``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal

from casework.apps.sql.models import DatabaseSchema
from casework.apps.sql.repository import SchemaRepository
from casework.config import Settings, get_settings
from casework.stores import open_stores

__all__ = ["BUNDLED_SCHEMA", "SQLConfig", "SQLDeps", "build_deps", "open_repository"]

BUNDLED_SCHEMA = Path(__file__).parent / "data" / "schemas" / "security.json"


@dataclass(frozen=True)
class SQLConfig:
    """The spec's configuration table (the models are the run config's, by ``models.ROLES``)."""

    retrieval_type: Literal["semantic", "keyword"] = "semantic"
    top_k: int = 5
    max_iterations: int = 10
    """Tool calls per question."""
    max_retrieval_calls: int = 3
    max_validation_attempts: int = 4
    max_judge_calls: int = 3
    demonstrations: int = 2
    """The verified questions of the database (nearest first) the bundled model's
    self-consistency prompt shows (issue 32; 0: none)."""
    max_rows: int = 200
    timeout_seconds: float = 10.0


@dataclass(frozen=True)
class SQLDeps:
    schema: DatabaseSchema
    settings: Settings
    db_url: str | None = None
    """Where questions are executed; None: validate only (no database)."""
    config: SQLConfig = field(default_factory=SQLConfig)
    vectors_dir: Path | None = None
    """Chroma directory for semantic retrieval; None: the settings' vector path."""
    extra: dict[str, Any] = field(default_factory=dict)

    def with_config(self, **changes: Any) -> SQLDeps:
        return replace(self, config=replace(self.config, **changes))

    def on_database(self, db_url: str) -> SQLDeps:
        """The same deps on another database, with that database's (reflected) schema."""
        if db_url == self.db_url:
            return self
        return replace(self, db_url=db_url, schema=_reflected(db_url))

    @property
    def dialect(self) -> str:
        from casework.apps.sql.database import dialect_of

        return dialect_of(self.db_url) if self.db_url else "sqlite"


@cache
def _reflected(db_url: str) -> DatabaseSchema:
    from casework.apps.sql.schemas import reflect_schema

    return reflect_schema(db_url)


def open_repository(settings: Settings | None = None) -> SchemaRepository:
    """The stored schemas, on the settings' database (migrated on first use)."""
    return SchemaRepository(open_stores(settings or get_settings()).engine)


def build_deps(
    settings: Settings | None = None,
    *,
    schema: DatabaseSchema | None = None,
    schema_name: str | None = None,
    db_url: str | None = None,
    config: SQLConfig | None = None,
) -> SQLDeps:
    """Deps on a given schema, or on a stored one (by name, else the newest), else the
    bundled security schema."""
    settings = settings or get_settings()
    if schema is None:
        from casework.apps.sql.schemas import load_schema
        from casework.errors import NotFoundError

        repo = open_repository(settings)
        try:
            stored = repo.get(schema_name)
            schema, db_url = stored.schema, db_url or stored.db_url
        except NotFoundError:
            if schema_name is not None:
                raise
            schema = load_schema(BUNDLED_SCHEMA, name="security")
    return SQLDeps(
        schema=schema,
        settings=settings,
        db_url=db_url,
        config=config or SQLConfig(),
    )
