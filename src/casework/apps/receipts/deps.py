"""One deps object per run: repository, vector collection, places provider, cache, settings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from casework.apps.receipts.places import LocalPlacesProvider, PlacesProvider
from casework.apps.receipts.repository import ReceiptsRepository
from casework.apps.receipts.vectors import COLLECTION
from casework.config import Settings, get_settings
from casework.stores.sql import get_engine, migrate

__all__ = ["LookupCache", "ReceiptsDeps", "build_deps"]

T = TypeVar("T")


class LookupCache:
    """Memoises repeated look-ups within one run (harmoniser, evaluation); thread-safe."""

    def __init__(self) -> None:
        self._data: dict[Hashable, Any] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._data:
                self.hits += 1
                return cast(T, self._data[key])  # stored by compute() for this key
        value = compute()
        with self._lock:
            self.misses += 1
            self._data.setdefault(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


@dataclass(frozen=True)
class ReceiptsDeps:
    """What tools, strategies and the harmoniser need; tests build it with fakes or tmp stores."""

    repo: ReceiptsRepository
    vectors: Any | None
    """A Chroma collection, or None when the vector store is unavailable."""
    places: PlacesProvider
    settings: Settings
    cache: LookupCache | None = None
    vectors_error: str | None = None
    """Why ``vectors`` is None, for the 'unavailable' answers."""
    extra: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        return self.cache.get(key, compute) if self.cache is not None else compute()

    def with_cache(self, cache: LookupCache | None = None) -> ReceiptsDeps:
        return ReceiptsDeps(
            repo=self.repo,
            vectors=self.vectors,
            places=self.places,
            settings=self.settings,
            cache=cache or LookupCache(),
            vectors_error=self.vectors_error,
            extra=self.extra,
        )

    def without_vectors(self, reason: str = "vector store disabled") -> ReceiptsDeps:
        return ReceiptsDeps(
            repo=self.repo,
            vectors=None,
            places=self.places,
            settings=self.settings,
            cache=self.cache,
            vectors_error=reason,
            extra=self.extra,
        )


def build_deps(
    settings: Settings | None = None,
    *,
    db_url: str | None = None,
    vectors_dir: Any = None,
    collection: str = COLLECTION,
    places: PlacesProvider | None = None,
    with_vectors: bool = True,
    run_migrations: bool = True,
) -> ReceiptsDeps:
    """Deps on the configured stores (migrated on first use). A vector store that can't be
    opened gives deps without vectors, not an error: the tools then answer 'unavailable'."""
    settings = settings or get_settings()
    engine = get_engine(db_url or settings.db_url)
    if run_migrations:
        migrate(engine)
    repo = ReceiptsRepository(engine)
    vectors, error = None, None
    if with_vectors:
        try:
            from casework.stores.vector import open_collection

            vectors = open_collection(vectors_dir or settings.vectors_dir, collection)
        except Exception as exc:  # a broken or locked Chroma directory
            error = f"vector store could not be opened ({type(exc).__name__}: {exc})"
    else:
        error = "vector store disabled"
    return ReceiptsDeps(
        repo=repo,
        vectors=vectors,
        places=places or LocalPlacesProvider(repo),
        settings=settings,
        vectors_error=error,
    )
