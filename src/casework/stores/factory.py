"""Open an app's stores from settings: the migrated SQL engine now, the vector client on use."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from casework.config import Settings
from casework.stores.sql import get_engine, migrate

__all__ = ["Stores", "open_stores"]

_migrated: set[str] = set()
_migrate_lock = threading.Lock()


def _new_lock_in_child() -> None:
    """A forked child gets its own lock: the parent's may be held by a thread not copied."""
    global _migrate_lock
    _migrate_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def _migrated_engine(url: str) -> Engine:
    """The engine for ``url``, upgraded to every registered head once per process."""
    engine = get_engine(url)
    with _migrate_lock:
        if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
            _migrated.discard(url)  # the file was deleted: a new, empty database
        if url not in _migrated:
            migrate(engine)
            _migrated.add(url)
    return engine


@dataclass
class Stores:
    """The stores of one settings object. ``vector_client()`` opens Chroma the first time it
    is called, so commands that only read SQL never load it."""

    settings: Settings
    engine: Engine
    vectors_dir: Path
    _client: Any = field(default=None, repr=False)

    def vector_client(self) -> Any:
        if self._client is None:
            from casework.stores.vector import open_vector_client

            self._client = open_vector_client(self.vectors_dir)
        return self._client

    def collection(self, name: str) -> Any:
        """A cosine collection embedded with the bundled MiniLM (created when missing)."""
        from casework.stores.vector import open_collection

        self.vector_client()
        return open_collection(self.vectors_dir, name)


def open_stores(
    settings: Settings,
    *,
    db_url: str | None = None,
    vectors_dir: Path | None = None,
    run_migrations: bool = True,
) -> Stores:
    """The SQL engine (migrated on first use per URL) and the lazy vector store of ``settings``;
    ``db_url`` and ``vectors_dir`` override the settings' locations."""
    url = db_url or settings.db_url
    engine = _migrated_engine(url) if run_migrations else get_engine(url)
    return Stores(settings=settings, engine=engine, vectors_dir=vectors_dir or settings.vectors_dir)
