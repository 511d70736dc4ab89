"""Human approval as a saved pause, and a journal that makes side effects happen once.

A node (or tool) asks ``request_approval(...)``; LangGraph interrupts and checkpoints; the
caller resumes with ``{"type": "approve" | "edit" | "reject", ...}``. Because a node reruns
from its start on resume, every side effect behind an approval goes through
``SideEffectJournal.once(key, fn)``: the first call runs ``fn`` and records its result; any
later call with the same key returns the recorded result without running ``fn`` again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from langgraph.types import interrupt
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from casework.errors import InputError

__all__ = ["ApprovalDecision", "SideEffectJournal", "effect_key", "request_approval"]


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
    digest = hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{thread_id}:{action}:{digest}"


class SideEffectJournal:
    """Idempotent side effects, journaled in ``casework_side_effects`` (core migration)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, key: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                text("SELECT status, result_json FROM casework_side_effects WHERE key = :k"),
                {"k": key},
            ).first()
        if row is None:
            return None
        return {
            "status": row.status,
            "result": json.loads(row.result_json) if row.result_json else None,
        }

    def once(
        self,
        key: str,
        fn: Callable[[], Any],
        *,
        thread_id: str = "",
        action: str = "",
        args: dict[str, Any] | None = None,
    ) -> Any:
        """Run ``fn`` at most once per key; returns its (recorded) result."""
        done = self.get(key)
        if done and done["status"] == "done":
            return done["result"]
        now = datetime.now(UTC)
        if done is None:
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        text(
                            "INSERT INTO casework_side_effects (key, thread_id, action, args_json, status, created_at)"
                            " VALUES (:k, :t, :a, :j, 'started', :now)"
                        ),
                        {
                            "k": key,
                            "t": thread_id,
                            "a": action,
                            "j": json.dumps(args or {}, default=str),
                            "now": now,
                        },
                    )
            except IntegrityError:
                # Another worker claimed it first: report what it recorded.
                done = self.get(key)
                if done and done["status"] == "done":
                    return done["result"]
        result = fn()
        with self.engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE casework_side_effects SET status='done', result_json=:r, completed_at=:now WHERE key=:k"
                ),
                {"k": key, "r": json.dumps(result, default=str), "now": datetime.now(UTC)},
            )
        return result

    def count(self, action: str | None = None) -> int:
        sql = "SELECT COUNT(*) FROM casework_side_effects WHERE status='done'"
        params: dict[str, Any] = {}
        if action:
            sql += " AND action=:a"
            params["a"] = action
        with self.engine.connect() as conn:
            return int(conn.execute(text(sql), params).scalar_one())
