"""The failure throttle: the three sign-in counts, forgetting old failures, and a bounded store
whose floods push out counters, never locks."""

from __future__ import annotations

from casework.web import throttle as throttle_module
from casework.web.throttle import FailureCounter, LockKind, LoginThrottle, wait_words


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_pair_locks_first_then_the_name_then_the_address() -> None:
    clock = Clock()
    t = LoginThrottle(failures=3, name_failures=5, address_failures=7, clock=clock)
    assert [t.failed("ana", "192.0.2.1")[0] for _ in range(3)] == [0, 0, 300.0]
    assert t.locked_for(" ANA ", "192.0.2.1") == (300.0, LockKind.PAIR)
    assert t.locked_for("ana", "192.0.2.2") == (0.0, LockKind.PAIR)  # not from elsewhere
    # Two more guesses at ana from two other addresses lock the name everywhere.
    assert t.failed("ana", "192.0.2.2") == (0.0, LockKind.PAIR)
    assert t.failed("ana", "192.0.2.3") == (300.0, LockKind.NAME)
    assert t.locked_for("ana", "203.0.113.9") == (300.0, LockKind.NAME)
    # One address spraying names: the seventh failure locks the address for every name.
    for i in range(6):
        assert t.failed(f"user{i}", "198.51.100.1")[0] == 0
    assert t.failed("user6", "198.51.100.1") == (300.0, LockKind.ADDRESS)
    assert t.locked_for("bob", "198.51.100.1") == (300.0, LockKind.ADDRESS)
    clock.now += 301
    assert t.locked_for("ana", "192.0.2.1")[0] == 0 and t.locked_for("bob", "198.51.100.1")[0] == 0


def test_old_failures_are_forgotten_and_a_success_clears_pair_and_name_only() -> None:
    clock = Clock()
    t = LoginThrottle(failures=3, name_failures=4, address_failures=5, clock=clock)
    t.failed("ana", "a")
    t.failed("ana", "a")
    clock.now += 301  # older than the lockout: a fresh count
    assert t.failed("ana", "a")[0] == 0 and t.failed("ana", "a")[0] == 0
    t.succeeded("ana", "a")
    assert t.failed("ana", "a")[0] == 0 and t.failed("ana", "a")[0] == 0
    # The address kept its count through the success: 2 + 2 + 1 more locks it.
    assert t.failed("zed", "a") == (300.0, LockKind.ADDRESS)


def test_a_flood_of_other_keys_evicts_counters_but_never_a_lock(monkeypatch) -> None:
    monkeypatch.setattr(throttle_module, "MAX_KEYS", 100)
    clock = Clock()
    counter = FailureCounter(limit=3, lockout_seconds=300, clock=clock)
    for _ in range(3):
        counter.failed("victim")
    counter.failed("half")  # a counter, not a lock
    for i in range(10_000):
        counter.failed(f"other{i}")
    assert counter.locked_for("victim") == 300.0
    assert len(counter) == 101  # 100 counters and the one lock
    assert counter.failed("half") == 0 and counter.failed("half") == 0  # its count was pushed out


def test_locks_are_bounded_too_the_soonest_ending_going_first(monkeypatch) -> None:
    monkeypatch.setattr(throttle_module, "MAX_LOCKS", 3)
    clock = Clock()
    counter = FailureCounter(limit=1, lockout_seconds=300, clock=clock)
    for i in range(4):
        clock.now += 1
        counter.failed(f"k{i}")
    assert [counter.locked_for(f"k{i}") > 0 for i in range(4)] == [False, True, True, True]


def test_wait_words() -> None:
    assert [wait_words(s) for s in (300, 61, 60, 1.2, 0)] == [
        "5 minutes",
        "2 minutes",
        "60 seconds",
        "2 seconds",
        "1 second",
    ]
