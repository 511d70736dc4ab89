"""Checkpointers: SQLite by default, PostgreSQL when the database URL is PostgreSQL."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from casework.config import Settings
from casework.stores.sql import private_dir, private_file, sqlite_refusal

__all__ = [
    "open_checkpointer",
    "postgres_checkpointer",
    "shared_sqlite_checkpointer",
    "sqlite_checkpointer",
]


def sqlite_checkpointer(path: Path) -> Any:
    """A SQLite saver on a file; the connection lives as long as the saver."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    private_dir(path.parent)
    private_file(path)  # paused runs hold the cases' data: 0600, like the database
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    try:
        saver.setup()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise sqlite_refusal(path, exc) or exc from None
    return saver


_savers: dict[str, Any] = {}
_savers_lock = threading.Lock()


def shared_sqlite_checkpointer(path: Path) -> Any:
    """One SQLite saver per file per process, so runs do not each open a connection."""
    with _savers_lock:
        if str(path) not in _savers:
            _savers[str(path)] = sqlite_checkpointer(path)
        return _savers[str(path)]


@contextmanager
def postgres_checkpointer(url: str) -> Iterator[Any]:
    from langgraph.checkpoint.postgres import PostgresSaver

    url = url.replace("postgresql+psycopg://", "postgresql://", 1)
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        yield saver


@contextmanager
def open_checkpointer(settings: Settings) -> Iterator[Any]:
    """The checkpointer that matches the configured database."""
    url = settings.db_url
    if url.startswith(("postgresql", "postgres")):
        with postgres_checkpointer(url) as saver:
            yield saver
    else:
        saver = sqlite_checkpointer(settings.checkpoint_path)
        try:
            yield saver
        finally:
            saver.conn.close()
