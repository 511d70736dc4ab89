"""The documents app's review provider: failed extractions in the platform inbox.

An item is an extraction that ended ``failed`` (with its reason), of any real user (the
evaluation's and the demo's owners have negative ids and stay out). A reviewer either retries
it (``service.start_extraction`` on the same document and fields, as its owner: the one
extraction path) or marks it reviewed with a note. Either decision is one entry of the
platform's side-effect journal under the extraction's key, so a double press or a second
reviewer changes nothing and reads who decided first; the item is "decided" once that entry
exists.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from sqlalchemy import String, cast, column, exists, func, literal, select, table, text

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.service import build_deps, start_extraction
from casework.apps.documents.tables import DocumentRow, ExtractionRow, RunEventRow, RunRow
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.llm.roles import RoleModels
from casework.runtime.approvals import SideEffectJournal
from casework.runtime.context import Caller, Role
from casework.runtime.decision import Decision, Evidence, ToolCallRecord
from casework.runtime.events import Event
from casework.runtime.review import (
    WAITING,
    Action,
    Cursor,
    DecideOutcome,
    ReviewDetail,
    ReviewFilters,
    ReviewItem,
    RunField,
    Section,
    Span,
    age_window,
    keyset_before,
)
from casework.runtime.runconfig import RunConfig
from casework.stores.sql import session_scope

__all__ = ["DECIDED", "KIND", "DocumentsReview"]

KIND = "failed_extraction"
DECIDED = "decided"
THREAD_PREFIX = "documents:extraction:"
REVIEW_ACTION = "documents_review"
LABELS = {"approve": "Retry the extraction", "reject": "Mark reviewed"}
SETTLE_WAIT_SECONDS = 5.0
"""How long a second decision waits for the first one's journal entry to complete."""

# The journal's table, read for the listing (the journal itself answers one key at a time).
_effects = table("casework_side_effects", column("thread_id"), column("action"), column("status"))


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _extraction_id(item_id: str) -> int:
    if not item_id.isdigit():
        raise NotFoundError(f"No documents review item {item_id!r}; open one from the inbox.")
    return int(item_id)


def _thread(extraction_id: int) -> str:
    return f"{THREAD_PREFIX}{extraction_id}"


def _key(extraction_id: int) -> str:
    return f"{_thread(extraction_id)}:review"


def _outcome(result: dict[str, Any]) -> str:
    if result.get("action") == "retry":
        return f"retried as extraction {result.get('extraction_id')}"
    note = result.get("note") or ""
    return "marked reviewed" + (f": {note}" if note else "")


class DocumentsReview:
    """``ReviewProvider`` over failed extractions; deps are opened on first use.

    ``strategy``/``chat_model``/``background`` say how a retry runs (tests: rules, in the
    calling thread); by default it is the agent on the configured model, in the background.
    """

    app = "documents"
    kinds = [KIND]
    statuses = [WAITING, DECIDED]

    def __init__(
        self,
        settings: Settings,
        *,
        deps: DocumentsDeps | None = None,
        strategy: str = "agent",
        chat_model: BaseChatModel | None = None,
        background: bool = True,
    ) -> None:
        self.settings = settings
        self._deps = deps
        self.strategy = strategy
        self._chat_model = chat_model
        self.background = background
        self._lock = threading.Lock()

    @property
    def deps(self) -> DocumentsDeps:
        with self._lock:
            if self._deps is None:
                self._deps = build_deps(self.settings)
            return self._deps

    @property
    def journal(self) -> SideEffectJournal:
        return SideEffectJournal(self.deps.repo.engine)

    # ------------------------------------------------------------------ listing
    @staticmethod
    def _decided() -> Any:
        return exists().where(
            _effects.c.thread_id == literal(THREAD_PREFIX) + cast(ExtractionRow.id, String),
            _effects.c.action == REVIEW_ACTION,
            _effects.c.status == "done",
        )

    def _where(self, filters: ReviewFilters) -> list[Any]:
        where: list[Any] = [ExtractionRow.status == "failed", ExtractionRow.owner_id >= 0]
        if filters.status == WAITING:
            where.append(~self._decided())
        elif filters.status == DECIDED:
            where.append(self._decided())
        else:
            raise InputError(
                f"Unknown status {filters.status!r}; use one of: {', '.join(self.statuses)}."
            )
        where += age_window(ExtractionRow.updated_at, filters)
        return where

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        # An extraction's failure time is its last update: items are ordered by it.
        where = self._where(filters)
        where += keyset_before(ExtractionRow.updated_at, ExtractionRow.id, before)
        q = (
            select(
                ExtractionRow.id,
                ExtractionRow.updated_at,
                ExtractionRow.reason,
                ExtractionRow.method,
                DocumentRow.id,
                DocumentRow.filename,
            )
            .join(DocumentRow, DocumentRow.id == ExtractionRow.document_id)
            .where(*where)
            .order_by(ExtractionRow.updated_at.desc(), ExtractionRow.id.desc())
            .limit(limit)
        )
        with session_scope(self.deps.repo.engine) as s:
            rows = s.execute(q).all()
        return [
            ReviewItem(
                app=self.app,
                kind=KIND,
                id=str(ext_id),
                sort_id=ext_id,
                title=f"Extraction {ext_id} of {filename} failed",
                status=filters.status,
                created_at=_utc(updated),
                summary=f"document {doc_id}, {method}: {reason[:160] or '(no reason recorded)'}",
            )
            for ext_id, updated, reason, method, doc_id, filename in rows
        ]

    def count(self, filters: ReviewFilters) -> int:
        q = select(func.count()).select_from(ExtractionRow).where(*self._where(filters))
        with session_scope(self.deps.repo.engine) as s:
            return int(s.scalar(q) or 0)

    # ------------------------------------------------------------------ one item
    def _failed(self, extraction_id: int) -> tuple[ExtractionRow, DocumentRow]:
        with session_scope(self.deps.repo.engine) as s:
            found = s.execute(
                select(ExtractionRow, DocumentRow)
                .join(DocumentRow, DocumentRow.id == ExtractionRow.document_id)
                .where(ExtractionRow.id == extraction_id, ExtractionRow.owner_id >= 0)
            ).one_or_none()
            if found is None or found[0].status != "failed":
                raise NotFoundError(
                    f"No failed extraction {extraction_id}; open one from the inbox."
                )
            ext, doc = found
            s.expunge_all()
            return ext, doc

    def _config(self) -> RunConfig:
        """A retry's run config: the settings' models, or the chat model handed in (tests)."""
        config = RunConfig.of(self.settings)
        if self._chat_model is not None:
            config = replace(config, models=RoleModels.given(self._chat_model))
        return config

    def _owner(self, user_id: int) -> Caller:
        """The extraction's owner: a retry runs as them, in their tenant."""
        with session_scope(self.deps.repo.engine) as s:
            name = s.scalar(text("SELECT name FROM users WHERE id = :id"), {"id": user_id})
        return Caller(user_id=user_id, name=name or f"user {user_id}", role=Role.USER)

    def get(self, item_id: str) -> ReviewDetail:
        repo = self.deps.repo
        ext, doc = self._failed(_extraction_id(item_id))
        owner = self._owner(ext.owner_id or 0)
        read = repo.document_text(owner.user_id, doc.id)
        body, pages = read if read is not None else ("", 0)
        entry = self.journal.entry(_key(ext.id))
        if entry is not None and entry.status != "done":
            entry = None  # a decision under way (or one that died): still waiting
        item = ReviewItem(
            app=self.app,
            kind=KIND,
            id=str(ext.id),
            sort_id=ext.id,
            title=f"Extraction {ext.id} of {doc.filename} failed",
            status=WAITING if entry is None else DECIDED,
            created_at=_utc(ext.updated_at),
            summary=f"document {doc.id} of {owner.name}, {pages} page(s), method {ext.method}",
        )
        decision = Decision(
            verdict="failed",
            confidence=0,
            reasoning=ext.reason or "(no reason recorded)",
            evidence=[
                Evidence(
                    source="documents",
                    ref=f"document {doc.id}",
                    summary=f"{doc.filename} ({doc.media_type}, {pages} page(s)) of {owner.name}.",
                    fields={"filename": doc.filename, "pages": pages},
                ),
                Evidence(
                    source="documents_extractions",
                    ref=f"extraction {ext.id}",
                    summary=f"{ext.mode} mode, method {ext.method}, "
                    f"{len(ext.fields or {})} field(s) written before it failed.",
                    fields={"status": ext.status, "document_type": ext.document_type},
                ),
            ],
        )
        scores = ext.confidence_scores or {}
        fields = {
            name: f"{json.dumps(value, ensure_ascii=False, default=str)}"
            + (f"  ({scores[name]})" if name in scores else "")
            for name, value in (ext.fields or {}).items()
        }
        if ext.requested_fields:
            fields |= {
                f"{name} (requested)": "not extracted"
                for name in ext.requested_fields
                if name not in fields
            }
        history = repo.extractions_of(owner.user_id, doc.id)
        sections = [
            Section(
                title=f"Extracted fields (type {ext.document_type or 'unknown'})",
                kind="fields",
                fields=fields or {"(none)": "nothing was extracted before the failure"},
            ),
            Section(
                title=f"Document text: {doc.filename}",
                kind="lines",
                lines=[[Span(line)] for line in body.splitlines()] or [[Span("(no text read)")]],
            ),
            Section(
                title="Extractions of this document",
                kind="table",
                columns=["id", "status", "method", "fields", "reason"],
                rows=[[x.id, x.status, x.method, len(x.fields), x.reason] for x in history],
            ),
        ]
        detail = ReviewDetail(
            item=item,
            decision=decision,
            trajectory=self._trajectory(ext),
            sections=sections,
            actions=["approve", "reject"] if entry is None else [],
            action_labels=LABELS,
        )
        if entry is None or not isinstance(entry.result, dict):
            return detail
        return replace(
            detail,
            decided_by=entry.result.get("by"),
            decided_at=datetime.fromisoformat(entry.result["at"]),
            outcome=_outcome(entry.result),
        )

    def _trajectory(self, ext: ExtractionRow) -> list[ToolCallRecord]:
        """The tool calls of the runs that wrote this extraction, from their recorded events
        (the spec's flat events carry a call's input, not its output)."""
        q = (
            select(RunEventRow.run_id, RunEventRow.seq, RunEventRow.data)
            .join(RunRow, RunRow.id == RunEventRow.run_id)
            .where(RunRow.extraction_id == ext.id, RunRow.owner_id == ext.owner_id)
            .order_by(RunRow.created_at, RunEventRow.seq)
        )
        with session_scope(self.deps.repo.engine) as s:
            rows = s.execute(q).all()
        return [
            ToolCallRecord(
                name=str(data["tool"]),
                args=data["input"]
                if isinstance(data.get("input"), dict)
                else {"input": data.get("input")},
                id=f"{run_id}:{seq}",
            )
            for run_id, seq, data in rows
            if isinstance(data, dict) and "tool" in data
        ]

    # ------------------------------------------------------------------ deciding
    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        if action not in ("approve", "reject"):
            raise InputError("A failed extraction is retried (approve) or marked reviewed.")
        ext, doc = self._failed(_extraction_id(item_id))
        token = uuid.uuid4().hex
        key = _key(ext.id)
        journal = self.journal

        def settle(_key: str) -> dict[str, Any]:
            result: dict[str, Any] = {
                "by": caller.name,
                "at": datetime.now(UTC).isoformat(),
                "note": note,
                "token": token,
            }
            if action == "reject":
                return result | {"action": "reviewed"}
            handle = start_extraction(
                self.deps,
                self._owner(ext.owner_id or 0),
                doc.id,
                fields=ext.requested_fields,
                strategy=self.strategy,
                config=self._config(),
                background=self.background,
            )
            return result | {
                "action": "retry",
                "run_id": handle.run_id,
                "extraction_id": handle.extraction_id,
            }

        def settled_elsewhere(_key: str) -> dict[str, Any] | None:
            # Another decision holds the intent: wait for its answer rather than retry twice.
            deadline = time.monotonic() + SETTLE_WAIT_SECONDS
            while time.monotonic() < deadline:
                entry = journal.entry(key)
                if entry is not None and entry.status == "done":
                    return entry.result
                time.sleep(0.05)
            return None

        result = journal.once(
            key,
            settle,
            reconcile=settled_elsewhere,
            thread_id=_thread(ext.id),
            action=REVIEW_ACTION,
            args={"action": action, "by": caller.name},
        )
        return DecideOutcome(
            applied=result.get("token") == token,
            outcome=_outcome(result),
            decided_by=result.get("by", "unknown"),
            decided_at=datetime.fromisoformat(result["at"]),
        )

    # ------------------------------------------------------------------ live runs
    def run_fields(self) -> list[RunField]:
        return []

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        raise InputError("Extractions start from `casework documents extract`, not this page.")
