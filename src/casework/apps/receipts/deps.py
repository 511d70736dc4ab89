"""One deps object per run: repository, vector collection, places provider, cache, settings."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from casework.apps.receipts.places import LocalPlacesProvider, PlacesProvider
from casework.apps.receipts.repository import ReceiptsRepository
from casework.apps.receipts.vectors import COLLECTION
from casework.config import Settings, get_settings
from casework.runtime.cache import LookupCache
from casework.stores import open_stores

__all__ = ["ReceiptsDeps", "build_deps"]

T = TypeVar("T")


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
    stores = open_stores(
        settings, db_url=db_url, vectors_dir=vectors_dir, run_migrations=run_migrations
    )
    repo = ReceiptsRepository(stores.engine)
    vectors, error = None, None
    if with_vectors:
        try:
            vectors = stores.collection(collection)
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
