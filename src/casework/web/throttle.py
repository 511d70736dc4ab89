"""Failure throttling for sign-ins and API tokens: after a few failures, a key locks a while.

A sign-in failure counts three times: for the (user name, client address) pair, for the
name from every address, and for the address whatever the name. The pair locks first (a
guesser at one account is stopped without locking the owner out from elsewhere); the name
locks when guesses for it come from many addresses (rotating ``X-Forwarded-For``, a botnet);
the address locks when it tries one password on many names (spraying). Failures older than
the lockout are forgotten. While locked, every attempt is refused with a 429 before the
password is checked, so the answer tells nothing about it. The server counts failed API
tokens per address the same way (``casework.server.auth``).

Counters live in the server's memory, bounded: a flood of failures on other keys pushes out
the oldest *counters*, never a lock (locks are kept apart, and end on their own). A restart
forgets both, which costs a guesser more time than the lockout does.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["FailureCounter", "LockKind", "LoginThrottle", "wait_words"]

MAX_KEYS = 10_000
"""Unlocked counters kept at most per counter; the least recently touched one goes first."""
MAX_LOCKS = 100_000
"""Locks kept at most: every one costs its key several failed checks, so reaching this needs
hundreds of thousands of slow password checks within one lockout."""


@dataclass
class _Count:
    failures: int
    since: float


@dataclass
class FailureCounter:
    """Failures per key within ``window_seconds``; ``limit`` of them lock the key for
    ``lockout_seconds``. Thread-safe."""

    limit: int
    lockout_seconds: float
    clock: Callable[[], float] = time.monotonic
    _counts: OrderedDict[Hashable, _Count] = field(default_factory=OrderedDict)
    _locks: OrderedDict[Hashable, float] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def locked_for(self, key: Hashable) -> float:
        """Seconds until ``key`` may try again (0: it may now)."""
        with self._lock:
            until = self._locks.get(key)
            if until is None:
                return 0.0
            left = until - self.clock()
            if left <= 0:  # the lock ran out: a fresh count
                del self._locks[key]
                return 0.0
            return left

    def failed(self, key: Hashable) -> float:
        """Count a failure; the lock's length in seconds when this one set it, else 0."""
        now = self.clock()
        with self._lock:
            count = self._counts.pop(key, None)
            if count is None or now - count.since > self.lockout_seconds:
                count = _Count(0, now)
            count.failures += 1
            if count.failures < self.limit:
                self._counts[key] = count  # most recently touched last
                while len(self._counts) > MAX_KEYS:
                    self._counts.popitem(last=False)
                return 0.0
            self._lock_key(key, now)
            return self.lockout_seconds

    def _lock_key(self, key: Hashable, now: float) -> None:
        self._locks.pop(key, None)
        self._locks[key] = now + self.lockout_seconds  # ordered by when they end
        while len(self._locks) > MAX_LOCKS:
            self._locks.popitem(last=False)  # the one that ends soonest

    def forget(self, key: Hashable) -> None:
        """Clear ``key``'s count (not its lock: a lock runs its time)."""
        with self._lock:
            self._counts.pop(key, None)

    def __len__(self) -> int:
        return len(self._counts) + len(self._locks)


class LockKind(StrEnum):
    """Which count locked a sign-in; the 429's sentence names it."""

    PAIR = "this user name from this address"
    NAME = "this user name"
    ADDRESS = "this address"


@dataclass
class LoginThrottle:
    failures: int = 5
    """Wrong passwords for one name from one address before that pair locks."""
    lockout_seconds: float = 300.0
    name_failures: int = 10
    """Wrong passwords for one name from all addresses before the name locks."""
    address_failures: int = 20
    """Wrong passwords from one address for all names before the address locks."""
    clock: Callable[[], float] = time.monotonic
    _counters: dict[LockKind, FailureCounter] = field(init=False)

    def __post_init__(self) -> None:
        limits = {
            LockKind.PAIR: self.failures,
            LockKind.NAME: self.name_failures,
            LockKind.ADDRESS: self.address_failures,
        }
        self._counters = {
            kind: FailureCounter(limit, self.lockout_seconds, clock=lambda: self.clock())
            for kind, limit in limits.items()
        }

    @staticmethod
    def _keys(user: str, address: str) -> dict[LockKind, Hashable]:
        name = user.strip().casefold()
        return {LockKind.PAIR: (name, address), LockKind.NAME: name, LockKind.ADDRESS: address}

    def locked_for(self, user: str, address: str) -> tuple[float, LockKind]:
        """Seconds until this name may try again from this address (0: it may now), and the
        count that holds it back longest."""
        keys = self._keys(user, address)
        waits = [(self._counters[kind].locked_for(key), kind) for kind, key in keys.items()]
        return max(waits, key=lambda pair: pair[0])

    def failed(self, user: str, address: str) -> tuple[float, LockKind]:
        """Count a wrong password; the longest lock this one set (0 when none) and its kind."""
        keys = self._keys(user, address)
        locks = [(self._counters[kind].failed(key), kind) for kind, key in keys.items()]
        return max(locks, key=lambda pair: pair[0])

    def succeeded(self, user: str, address: str) -> None:
        """The right password: the pair's and the name's counts start again (the address's
        does not: one good account of a sprayer's must not reset its spraying)."""
        keys = self._keys(user, address)
        self._counters[LockKind.PAIR].forget(keys[LockKind.PAIR])
        self._counters[LockKind.NAME].forget(keys[LockKind.NAME])

    def entries(self) -> int:
        """Counters and locks held (to check the store stays bounded)."""
        return sum(len(c) for c in self._counters.values())


def wait_words(seconds: float) -> str:
    """'5 minutes', '1 minute', '40 seconds': how long a locked sign-in waits, rounded up."""
    if seconds > 60:
        minutes = math.ceil(seconds / 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    whole = max(1, math.ceil(seconds))
    return f"{whole} second{'s' if whole != 1 else ''}"
