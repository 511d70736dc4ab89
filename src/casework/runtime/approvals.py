"""Human approval as a saved pause, and a journal that makes side effects happen exactly once.

A node (or tool) asks ``request_approval(...)``; LangGraph interrupts and checkpoints; the
caller resumes with ``{"type": "approve" | "edit" | "reject", ...}``. Because a node reruns
from its start on resume (and a killed process resumes from its last checkpoint), every side
effect goes through ``SideEffectJournal.once(key, effect, reconcile=...)``.

The rule, strictly:

1. The journal records the effect's *intent* (committed) before the effect runs, and its
   *completion* with the result after. The effect receives the key as an idempotency key,
   to pass to the provider (an email's Message-ID, a row's unique key, an API's
   ``Idempotency-Key``) so the provider itself can recognise a repeat.
2. Completed: any later call returns the recorded result; the effect does not run.
3. Intent without completion (the process died between the two, or another worker is on
   it): the effect is not blindly run again. If a ``reconcile(key)`` check is given, it asks
   the provider whether the effect with that key happened; if it did, its answer is recorded
   as the completion and returned. If it did not (or there is no check), the effect runs
   again *with the same idempotency key*, so a provider that dedupes on the key still makes
   it happen once. The journal counts attempts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from langgraph.types import interrupt
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from casework.errors import InputError

__all__ = [
    "ApprovalDecision",
    "Effect",
    "JournalEntry",
    "Reconcile",
    "SideEffectJournal",
    "effect_key",
    "request_approval",
]


class ApprovalDecision(TypedDict, total=False):
    type: Literal["approve", "edit", "reject"]
    args: dict[str, Any]
    """For ``edit``: the arguments that replace the proposed ones."""
    message: str
    """For ``reject``: why."""


def request_approval(action: str, args: dict[str, Any], description: str = "") -> ApprovalDecision:
    """Pause for a person; returns their decision when the run is resumed.

    The interrupt value is ``{"action", "args", "description", "allowed": [...]}``.
    """
    answer = interrupt(
        {
            "action": action,
            "args": args,
            "description": description,
            "allowed": ["approve", "edit", "reject"],
        }
    )
    if isinstance(answer, dict) and "decisions" in answer:  # HITL-middleware style payload
        answer = answer["decisions"][0]
    if not isinstance(answer, dict) or answer.get("type") not in ("approve", "edit", "reject"):
        raise InputError("An approval must be {'type': 'approve' | 'edit' | 'reject'}.")
    if answer["type"] == "edit" and not isinstance(answer.get("args"), dict):
        raise InputError("An 'edit' approval needs the edited 'args'.")
    return answer  # type: ignore[return-value]


def effect_key(thread_id: str, action: str, args: dict[str, Any]) -> str:
    """A stable key for one action with these arguments in one thread."""
    digest = hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{thread_id}:{action}:{digest}"


INTENT = "intent"
DONE = "done"
# Rows written before the journal kept intents by that name (core_0001) mean the same.
_INTENT_STATES = (INTENT, "started")

Effect = Callable[[str], Any]
"""``effect(idempotency_key) -> result`` (JSON-serialisable)."""
Reconcile = Callable[[str], Any]
"""``reconcile(idempotency_key) -> result`` if the effect with that key happened, else None."""


@dataclass(frozen=True)
class JournalEntry:
    key: str
    status: str
    result: Any
    attempts: int
    completed_by: str | None
    """``effect`` (it ran and returned) or ``reconcile`` (the provider confirmed it later)."""


class SideEffectJournal:
    """Side effects that happen exactly once, journaled in ``casework_side_effects``.

    The table lives in the core migration branch (``core_0001``, ``core_0002``).
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def entry(self, key: str) -> JournalEntry | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT status, result_json, attempts, completed_by"
                    " FROM casework_side_effects WHERE key = :k"
                ),
                {"k": key},
            ).first()
        if row is None:
            return None
        result = json.loads(row.result_json) if row.result_json else None
        return JournalEntry(key, row.status, result, row.attempts, row.completed_by)

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self.entry(key)
        return None if entry is None else {"status": entry.status, "result": entry.result}

    def once(
        self,
        key: str,
        effect: Effect,
        *,
        reconcile: Reconcile | None = None,
        thread_id: str = "",
        action: str = "",
        args: dict[str, Any] | None = None,
    ) -> Any:
        """Run ``effect(key)`` exactly once per key (see the module's rule); returns its result."""
        entry = self.entry(key)
        if entry is None and not self._record_intent(key, thread_id, action, args):
            entry = self.entry(key)  # another worker recorded the intent first
        if entry is not None:
            if entry.status == DONE:
                return entry.result
            if reconcile is not None:
                found = reconcile(key)
                if found is not None:
                    self._complete(key, found, completed_by="reconcile")
                    return found
            self._count_attempt(key)
        result = effect(key)
        self._complete(key, result, completed_by="effect")
        return result

    def _record_intent(
        self, key: str, thread_id: str, action: str, args: dict[str, Any] | None
    ) -> bool:
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    text(
                        "INSERT INTO casework_side_effects"
                        " (key, thread_id, action, args_json, status, attempts, created_at)"
                        " VALUES (:k, :t, :a, :j, :s, 1, :now)"
                    ),
                    {
                        "k": key,
                        "t": thread_id,
                        "a": action,
                        "j": json.dumps(args or {}, default=str),
                        "s": INTENT,
                        "now": datetime.now(UTC),
                    },
                )
        except IntegrityError:
            return False
        return True

    def _count_attempt(self, key: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                text("UPDATE casework_side_effects SET attempts = attempts + 1 WHERE key = :k"),
                {"k": key},
            )

    def _complete(self, key: str, result: Any, *, completed_by: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE casework_side_effects SET status = :s, result_json = :r,"
                    " completed_by = :by, completed_at = :now WHERE key = :k"
                ),
                {
                    "k": key,
                    "s": DONE,
                    "r": json.dumps(result, default=str),
                    "by": completed_by,
                    "now": datetime.now(UTC),
                },
            )

    def pending(self) -> list[str]:
        """Keys with an intent and no completion (to reconcile after a crash)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                text("SELECT key FROM casework_side_effects WHERE status IN ('intent', 'started')")
            )
            return [r.key for r in rows]

    def count(self, action: str | None = None) -> int:
        """Completed effects (of one action)."""
        sql = "SELECT COUNT(*) FROM casework_side_effects WHERE status = 'done'"
        params: dict[str, Any] = {}
        if action:
            sql += " AND action = :a"
            params["a"] = action
        with self.engine.connect() as conn:
            return int(conn.execute(text(sql), params).scalar_one())
