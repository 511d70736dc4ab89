"""An app's deps, one per database, built on first use from the settings a request carries."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from fastapi import Depends
from fastapi.concurrency import run_in_threadpool

from casework.apikit.routes import get_settings_dep
from casework.config import Settings

D = TypeVar("D")


class DepsCache(Generic[D]):
    """An app's deps, one per database: built on first use from the settings a request
    carries (nothing is opened when the router is mounted); ``factory`` replaces the build
    in tests."""

    def __init__(
        self, build: Callable[[Settings], D], factory: Callable[[], D] | None = None
    ) -> None:
        self._build = build
        self._factory = factory
        self._by_url: dict[str, D] = {}
        self._lock = threading.Lock()

    def get(self, settings: Settings) -> D:
        with self._lock:
            if settings.db_url not in self._by_url:
                built = self._factory() if self._factory is not None else self._build(settings)
                self._by_url[settings.db_url] = built
            return self._by_url[settings.db_url]

    async def dependency(self, served: Settings = Depends(get_settings_dep)) -> D:
        """The FastAPI dependency: ``d: Deps = Depends(cache.dependency)``. On the event loop:
        once built, the deps are a dict look-up (cheaper than the hop to a worker thread a
        plain ``def`` costs); the first request opens the stores on a worker thread."""
        built = self._by_url.get(served.db_url)
        if built is None:
            built = await run_in_threadpool(self.get, served)
        return built
