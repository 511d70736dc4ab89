"""A lookup cache for one run or batch: repeated reads of the same store rows are made once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

__all__ = ["LookupCache"]

T = TypeVar("T")


class LookupCache:
    """Memoises look-ups by key (a tuple naming what was read); thread-safe.

    Two threads missing the same key may both compute it; the first value stored wins, so
    every caller sees one value per key.
    """

    def __init__(self) -> None:
        self._data: dict[Hashable, Any] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._data:
                self.hits += 1
                return cast(T, self._data[key])
        value = compute()
        with self._lock:
            self.misses += 1
            return cast(T, self._data.setdefault(key, value))

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
