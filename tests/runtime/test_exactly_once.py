"""Exactly once, strictly: a process killed between a side effect's intent and its completion
resumes without repeating or losing the effect (SideEffectJournal's rule)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from casework.runtime.approvals import SideEffectJournal
from casework.stores.sql import get_engine, migrate

BODY = Path(__file__).with_name("_killed_effect.py")
KEY = "case-7:notify:"


def _run(work: Path, mode: str, reconcile: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, BODY, work, mode, reconcile], capture_output=True, text=True, timeout=120
    )


def _provider(work: Path) -> tuple[list[str], list[str]]:
    """(messages the provider holds, times the effect function ran)."""
    with sqlite3.connect(work / "provider.db") as db:
        outbox = [r[0] for r in db.execute("SELECT key FROM outbox")]
        deliveries = [r[0] for r in db.execute("SELECT key FROM deliveries")]
    return outbox, deliveries


@pytest.mark.parametrize(
    ("die", "reconcile", "runs", "attempts", "completed_by"),
    [
        # the provider has it: the check confirms it, the effect does not run again
        ("die-after", "yes", 1, 1, "reconcile"),
        # the provider never got it: the check says so, the effect runs again
        ("die-before", "yes", 2, 2, "effect"),
        # no check: runs again with the same idempotency key; the provider dedupes it
        ("die-after", "no", 2, 2, "effect"),
    ],
)
def test_killed_between_intent_and_completion_neither_repeats_nor_loses(
    tmp_path, die, reconcile, runs, attempts, completed_by
):
    died = _run(tmp_path, die, reconcile)
    assert died.returncode == 17, died.stderr
    journal = SideEffectJournal(get_engine(f"sqlite:///{tmp_path}/journal.db"))
    (pending,) = journal.pending()  # the intent is on disk, the completion is not
    assert pending.startswith(KEY)
    outbox, _ = _provider(tmp_path)
    assert outbox == ([pending] if die == "die-after" else [])

    resumed = _run(tmp_path, "resume", reconcile)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split() == [
        "sent",
        pending,
        "done",
        str(attempts),
        completed_by,
    ]
    outbox, deliveries = _provider(tmp_path)
    assert outbox == [pending]  # exactly one message, under the idempotency key
    assert deliveries == [pending] * runs
    assert journal.pending() == [] and journal.count("notify") == 1


def test_completed_effect_returns_the_recorded_result(tmp_path):
    engine = get_engine(f"sqlite:///{tmp_path}/j.db")
    migrate(engine)
    journal = SideEffectJournal(engine)
    keys: list[str] = []
    first = journal.once("k1", lambda key: keys.append(key) or {"id": 7}, action="a")
    again = journal.once("k1", lambda key: keys.append(key) or {"id": 8}, action="a")
    assert first == again == {"id": 7} and keys == ["k1"]
    entry = journal.entry("k1")
    assert entry is not None
    assert (entry.status, entry.attempts, entry.completed_by) == ("done", 1, "effect")
