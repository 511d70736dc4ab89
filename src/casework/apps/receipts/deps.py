"""The deps every run shares: repository, vector collection, places provider, cache, settings
and the stored confidence calibrations (a run's models come in its ``RunConfig``)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from casework.apps.receipts.places import LocalPlacesProvider, PlacesProvider
from casework.apps.receipts.repository import ReceiptsRepository
from casework.apps.receipts.vectors import COLLECTION
from casework.config import Settings, get_settings
from casework.runtime.cache import LookupCache
from casework.runtime.calibration import Calibration
from casework.runtime.context import Caller
from casework.stores import open_stores

__all__ = ["ReceiptsDeps", "build_deps", "stored_calibrations"]

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
    calibration: Callable[[str, str | None], Calibration | None] | None = None
    """``calibration(strategy, model)`` -> the stored confidence calibration, if any; the
    policy thresholds the calibrated confidence."""
    tenant: Caller | None = None
    """Whose run this is; ``repo`` is scoped to it (``None``: the local operator, unscoped).
    Set with ``for_tenant``, never from anything a model fills in."""

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        return self.cache.get(key, compute) if self.cache is not None else compute()

    def with_cache(self, cache: LookupCache | None = None) -> ReceiptsDeps:
        return replace(self, cache=cache or LookupCache())

    def without_vectors(self, reason: str = "vector store disabled") -> ReceiptsDeps:
        return replace(self, vectors=None, vectors_error=reason)

    def for_tenant(self, tenant: Caller | None) -> ReceiptsDeps:
        """These deps seen by ``tenant``: the repository (and the local places it reads) scoped
        to it, and a cache of its own, since cached lookups and built agents hold rows."""
        repo = self.repo.for_tenant(tenant)
        places = (
            LocalPlacesProvider(repo)
            if isinstance(self.places, LocalPlacesProvider)
            else self.places
        )
        cache = LookupCache() if self.cache is not None else None
        return replace(self, tenant=tenant, repo=repo, places=places, cache=cache)


def stored_calibrations(settings: Settings) -> Callable[[str, str | None], Calibration | None]:
    """Loads the calibration of (receipts, strategy, model) from ``<home>/calibration/``."""
    from casework.runtime.calibration import calibration_path, load_calibration

    def calibration(strategy: str, model: str | None) -> Calibration | None:
        return load_calibration(calibration_path(settings.home, "receipts", strategy, model))

    return calibration


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
        calibration=stored_calibrations(settings),
    )
