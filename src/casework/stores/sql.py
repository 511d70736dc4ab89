"""Relational store: SQLAlchemy 2 engine, declarative base and Alembic migrations.

SQLite file by default, PostgreSQL by URL. Every app adds its tables through its own Alembic
branch (a ``migrations/`` folder next to its models, first revision labelled with the app's
name); ``migrate()`` upgrades all branches to their heads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from casework.errors import ConfigError

__all__ = [
    "Base",
    "current_heads",
    "get_engine",
    "migrate",
    "migration_locations",
    "migration_status",
    "session_scope",
]

CORE_MIGRATIONS = Path(__file__).parent / "migrations"

# Stable constraint names so migrations diff cleanly on SQLite and PostgreSQL alike.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


_engines: dict[str, Engine] = {}
_lock = threading.Lock()


SQLITE_POOL_SIZE = 40
"""Open SQLite connections kept per engine: AnyIO's default worker threads."""


def get_engine(url: str) -> Engine:
    """One engine per URL per process. SQLite files get WAL and foreign keys."""
    with _lock:
        engine = _engines.get(url)
        if engine is not None:
            return engine
        if url.startswith("sqlite:///"):
            path = Path(url.removeprefix("sqlite:///"))
            if str(path) not in ("", ":memory:"):
                path.parent.mkdir(parents=True, exist_ok=True)
            # The API server's worker threads (40) share it: a pool that keeps as many
            # connections open spares a connect (and the pragmas below) per request under load.
            engine = create_engine(
                url,
                connect_args={"check_same_thread": False, "timeout": 30},
                pool_size=SQLITE_POOL_SIZE,
                max_overflow=SQLITE_POOL_SIZE,
            )

            @event.listens_for(engine, "connect")
            def _sqlite_pragmas(
                dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry
            ) -> None:  # pragma: no cover - trivial
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA foreign_keys=ON")
                cur.execute("PRAGMA journal_mode=WAL")
                cur.close()
        elif url.startswith(("postgresql", "postgres")):
            url = url.replace("postgres://", "postgresql+psycopg://", 1)
            if url.startswith("postgresql://"):
                url = url.replace("postgresql://", "postgresql+psycopg://", 1)
            engine = create_engine(url, pool_pre_ping=True)
        else:
            raise ConfigError(
                f"Unsupported database URL {url!r}: use sqlite:///PATH or postgresql://…"
            )
        _engines[url] = engine
        return engine


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session that commits on success and rolls back on error: nothing half-written."""
    session = sessionmaker(engine, expire_on_commit=False)()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def migration_locations() -> list[Path]:
    """Core migrations plus every registered component's ``migrations/versions``."""
    from casework.registry import migration_dirs

    return [CORE_MIGRATIONS / "versions", *migration_dirs()]


def _alembic_config(engine: Engine, locations: Sequence[Path]) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(CORE_MIGRATIONS))
    cfg.set_main_option("version_locations", " ".join(str(p) for p in locations))
    cfg.set_main_option("path_separator", "space")
    cfg.attributes["engine"] = engine
    return cfg


def migrate(engine: Engine, locations: Sequence[Path] | None = None) -> None:
    """Upgrade every branch to its head (idempotent)."""
    cfg = _alembic_config(engine, locations or migration_locations())
    try:
        command.upgrade(cfg, "heads")
    except OperationalError as exc:
        # The driver's message may run over several lines (psycopg adds a hint): keep the first.
        reason = (str(exc.orig).strip().splitlines() or ["no answer"])[0].rstrip(".")
        raise ConfigError(
            f"The database at {engine.url.render_as_string()} is not reachable: {reason}."
        ) from exc


def current_heads(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(MigrationContext.configure(conn).get_current_heads())


def migration_status(
    engine: Engine, locations: Sequence[Path] | None = None
) -> tuple[set[str], set[str]]:
    """(applied heads, expected heads)."""
    script = ScriptDirectory.from_config(
        _alembic_config(engine, locations or migration_locations())
    )
    return current_heads(engine), set(script.get_heads())
