"""Sign-in throttling: after a few wrong passwords, a user name locks for a while per address.

The counter is kept per (user name, client address) in the server's memory: a guesser is
stopped without letting anyone lock a user out from elsewhere, and a restart forgets it (a
restart costs a guesser more time than the lockout does). While locked, every attempt is
refused with a 429 before the password is checked, so the answer tells nothing about it.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["LoginThrottle", "wait_words"]

MAX_KEYS = 10_000
"""Counters kept at most; the least recently touched one goes first."""


@dataclass
class _Entry:
    failures: int = 0
    locked_until: float = 0.0


@dataclass
class LoginThrottle:
    failures: int = 5
    """Wrong passwords in a row before the lock."""
    lockout_seconds: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _entries: OrderedDict[tuple[str, str], _Entry] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @staticmethod
    def _key(user: str, address: str) -> tuple[str, str]:
        return (user.strip().casefold(), address)

    def locked_for(self, user: str, address: str) -> float:
        """Seconds until this user name may try again from this address (0: it may now)."""
        key = self._key(user, address)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not entry.locked_until:
                return 0.0
            left = entry.locked_until - self.clock()
            if left <= 0:  # the lock ran out: a fresh count
                del self._entries[key]
                return 0.0
            return left

    def failed(self, user: str, address: str) -> float:
        """Count a wrong password; the lock's length in seconds when this one set it, else 0."""
        key = self._key(user, address)
        with self._lock:
            entry = self._entries.pop(key, None) or _Entry()
            self._entries[key] = entry  # most recently touched last
            while len(self._entries) > MAX_KEYS:
                self._entries.popitem(last=False)
            entry.failures += 1
            if entry.failures < self.failures:
                return 0.0
            entry.locked_until = self.clock() + self.lockout_seconds
            return self.lockout_seconds

    def succeeded(self, user: str, address: str) -> None:
        with self._lock:
            self._entries.pop(self._key(user, address), None)


def wait_words(seconds: float) -> str:
    """'5 minutes', '1 minute', '40 seconds': how long a locked sign-in waits, rounded up."""
    if seconds > 60:
        minutes = math.ceil(seconds / 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    whole = max(1, math.ceil(seconds))
    return f"{whole} second{'s' if whole != 1 else ''}"
