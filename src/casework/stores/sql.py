"""Relational store: SQLAlchemy 2 engine, declarative base and Alembic migrations.

SQLite file by default, PostgreSQL by URL. Every app adds its tables through its own Alembic
branch (a ``migrations/`` folder next to its models, first revision labelled with the app's
name); ``migrate()`` upgrades all branches to their heads.

The SQLite file holds password hashes and personal data: its folder is created 0700 and the
file 0600 (SQLite gives its -wal and -shm the file's mode), whatever the umask. A file that is
damaged, or cannot be opened or written, is a ``StoreUnavailable`` naming it and what to do,
from any statement on the engine (``store_problem`` asks it for ``/health``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, MetaData, create_engine, event, text
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry, NullPool

from casework.errors import ConfigError, StoreUnavailable
from casework.stores.schema import CORE_MIGRATIONS, migration_locations

__all__ = [
    "Base",
    "as_utc",
    "current_heads",
    "external_engine",
    "get_engine",
    "migrate",
    "migration_locations",
    "migration_status",
    "private_dir",
    "private_file",
    "session_scope",
    "sqlite_refusal",
    "store_problem",
]


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


# ---------------------------------------------------------------- one engine per URL
# An engine is a connection pool: made once per URL per process and shared by every case
# and thread (creating one per query or per case costs a connect each time and, on SQLite,
# leaves WAL files to whoever closes last). Keyed by the process id too: a forked child or a
# Ray worker builds its own pool rather than use sockets and file handles of its parent.

_engines: dict[tuple[int, str, str], Engine] = {}
_lock = threading.Lock()


SQLITE_POOL_SIZE = 40
"""Open SQLite connections kept per engine: AnyIO's default worker threads."""


def as_utc(value: datetime | None) -> datetime | None:
    """A stored time as UTC: SQLite hands back naive datetimes, and everything stored is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _postgres_url(url: str) -> str:
    """The SQLAlchemy URL with the installed PostgreSQL driver (psycopg 3)."""
    url = url.replace("postgres://", "postgresql+psycopg://", 1)
    if url.startswith("postgresql://"):
        url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    return url


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600

# What SQLite says of a file it cannot use, by who must act (the first line of its message).
_DAMAGED = ("file is not a database", "database disk image is malformed", "malformed database")
_UNWRITABLE = (
    "unable to open database file",
    "attempt to write a readonly database",
    "readonly database",
    "disk i/o error",
)


def _damaged(path: Path, reason: str) -> StoreUnavailable:
    return StoreUnavailable(
        f"The database {path} is damaged or is not a casework database ({reason}); restore "
        "it from a backup (or move it aside to start an empty one), then run `casework doctor`.",
        store=path.name,
    )


def _unwritable(path: Path, reason: str) -> StoreUnavailable:
    return StoreUnavailable(
        f"The database {path} cannot be opened or written ({reason}); make it and its folder "
        "writable for this user, or set CASEWORK_HOME to a folder you can write, then run "
        "`casework doctor`.",
        store=path.name,
    )


def private_dir(path: Path) -> None:
    """Create ``path`` (and its missing parents) for this user only: 0700, whatever the
    umask. A folder that exists is left as it is; one that cannot be made is a
    ``StoreUnavailable``."""
    if path.is_dir():
        return
    if path.exists():
        raise StoreUnavailable(
            f"{path} is a file, not a folder; move it aside, or set CASEWORK_HOME (or "
            "CASEWORK_DATABASE_URL) to another place.",
            store=path.name,
        )
    try:
        path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        path.chmod(PRIVATE_DIR)  # the umask may have taken bits mkdir was given
    except OSError as exc:
        raise StoreUnavailable(
            f"Cannot create the folder {path} ({exc.strerror or exc}); make its parent "
            "writable, or set CASEWORK_HOME (or CASEWORK_DATABASE_URL) to a place you can write.",
            store=path.name,
        ) from None


def private_file(path: Path) -> None:
    """Create the empty database file 0600 before SQLite opens it (an empty file is an empty
    database); SQLite then gives its -wal and -shm the same mode."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return
    except OSError as exc:
        raise _unwritable(path, exc.strerror or str(exc)) from None
    os.close(fd)
    os.chmod(path, PRIVATE_FILE)  # the umask may have taken bits os.open was given


def sqlite_refusal(path: Path, error: BaseException) -> StoreUnavailable | None:
    """SQLite's refusal of the file itself (damaged, cannot be opened or written) as one
    sentence naming it and what to do; None for any other error."""
    reason = (str(error).strip().splitlines() or [""])[0].rstrip(".")
    lowered = reason.lower()
    if any(m in lowered for m in _DAMAGED):
        return _damaged(path, reason)
    if any(m in lowered for m in _UNWRITABLE):
        return _unwritable(path, reason)
    return None


def _sqlite_errors(engine: Engine, path: Path) -> None:
    """Answer SQLite's refusals of the file itself, from any statement, as one sentence."""

    @event.listens_for(engine, "handle_error")
    def _translate(ctx: ExceptionContext) -> None:
        refusal = sqlite_refusal(path, ctx.original_exception)
        if refusal is not None:
            raise refusal from ctx.sqlalchemy_exception


def _casework_engine(url: str) -> Engine:
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        file = str(path) not in ("", ":memory:")
        if file:
            private_dir(path.parent)
            private_file(path)
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

        if file:
            _sqlite_errors(engine, path)
        return engine
    if url.startswith(("postgresql", "postgres")):
        return create_engine(_postgres_url(url), pool_pre_ping=True)
    raise ConfigError(f"Unsupported database URL {url!r}: use sqlite:///PATH or postgresql://…")


def store_problem(url: str) -> StoreUnavailable | None:
    """Why casework's own database cannot serve now (``/health``), or None.

    SQLite: a connection of its own (not one of the pool's, which may hold pages read before
    the damage) reads the header and the schema; SQLite refuses a truncated file as malformed
    on open. Never a Python ``open()`` of the file: closing that descriptor would drop the
    POSIX locks the pool's connections hold on it."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if not path.exists():
            return None  # not made yet: the first connection makes it
        try:
            own = sqlite3.connect(path, timeout=5)
            try:
                own.execute("SELECT count(*) FROM sqlite_master").fetchall()
            finally:
                own.close()
        except sqlite3.Error as exc:
            return sqlite_refusal(path, exc) or StoreUnavailable(
                f"The database {path} cannot be read ({exc}).", store=path.name
            )
        return None
    try:
        with get_engine(url).connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        reason = (str(getattr(exc, "orig", exc)).strip().splitlines() or ["no answer"])[0]
        return StoreUnavailable(f"The database is not reachable ({reason}).", store="database")
    return None


def _external_engine(url: str) -> Engine:
    if url.startswith("sqlite:///"):
        # No pool: a SQLite connect is cheap, and a pooled connection would keep reading a
        # file that was since replaced (``casework sql db create --replace``) by its old inode.
        return create_engine(url, poolclass=NullPool)
    return create_engine(_postgres_url(url), pool_pre_ping=True)


def _shared_engine(kind: str, url: str) -> Engine:
    key = (os.getpid(), kind, url)
    with _lock:
        engine = _engines.get(key)
        if engine is None:
            build = _casework_engine if kind == "casework" else _external_engine
            engine = _engines[key] = build(url)
        return engine


def get_engine(url: str) -> Engine:
    """Casework's own database: one engine per URL per process, shared by every thread.
    SQLite files get WAL and foreign keys."""
    return _shared_engine("casework", url)


def external_engine(url: str) -> Engine:
    """A database casework reads but does not own (the sql app's user databases): one engine
    per URL per process, shared by every thread, with no pragmas (WAL mode would be written
    into the user's file) and no migrations. The caller keeps it; it is disposed at exit."""
    return _shared_engine("external", url)


def _dispose_at_exit() -> None:
    """Close this process's pooled connections (SQLite checkpoints its WAL on the last close)."""
    pid = os.getpid()
    with _lock:
        mine = [e for (owner, *_), e in _engines.items() if owner == pid]
    for engine in mine:
        with contextlib.suppress(Exception):  # a server gone away at exit is no error
            engine.dispose()


def _after_fork_in_child() -> None:
    """The child gets fresh pools: engines it inherited (held by objects built before the
    fork) drop the parent's connections without closing them, which the parent still uses."""
    global _lock
    _lock = threading.Lock()
    for engine in list(_engines.values()):
        engine.dispose(close=False)
    _engines.clear()


atexit.register(_dispose_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)


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
