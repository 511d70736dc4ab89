"""The documents app's review provider: failed extractions in the platform inbox.

An item is an extraction that ended ``failed`` (with its reason), of any real user (the
evaluation's and the demo's owners have negative ids and stay out). A reviewer either retries
it (``service.start_extraction`` on the same document and fields, as its owner: the one
extraction path), corrects it (the fields typed as JSON: the extraction completes with them
and the document becomes a verified example, issue 32) or marks it reviewed with a note, through ``service.decide_failed_extraction``.
Either decision is one entry of the platform's side-effect journal under the extraction's key,
so a double press or a second reviewer changes nothing and reads who decided first; the item
is "decided" once that entry exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

from langchain_core.language_models import BaseChatModel

from casework.apikit import DepsCache
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import ExtractionInfo, FailedExtraction
from casework.apps.documents.service import (
    build_deps,
    decide_failed_extraction,
    extraction_owner,
    settled_review,
)
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller
from casework.runtime.decision import Decision, Evidence
from casework.runtime.events import Event
from casework.runtime.review_provider import (
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
    known_status,
)
from casework.runtime.runconfig import RunConfig

__all__ = ["DECIDED", "KIND", "DocumentsReview"]

KIND = "failed_extraction"
DECIDED = "decided"
LABELS = {
    "approve": "Retry the extraction",
    "edit": "Save the corrected fields",
    "reject": "Mark reviewed",
}


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _extraction_id(item_id: str) -> int:
    if not item_id.isdigit():
        raise NotFoundError(f"No documents review item {item_id!r}; open one from the inbox.")
    return int(item_id)


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
        strategy: str = "cascade",
        chat_model: BaseChatModel | None = None,
        background: bool = True,
    ) -> None:
        self.settings = settings
        self._deps = DepsCache(build_deps, None if deps is None else lambda: deps)
        self.strategy = strategy
        self._chat_model = chat_model
        self.background = background

    @property
    def deps(self) -> DocumentsDeps:
        return self._deps.get(self.settings)

    # ------------------------------------------------------------------ listing
    def _decided(self, filters: ReviewFilters) -> bool:
        return known_status(filters, self.statuses) == DECIDED

    def _config(self) -> RunConfig:
        """A retry's run config: the settings' models, or the chat model handed in (tests)."""
        config = RunConfig.of(self.settings)
        if self._chat_model is not None:
            config = replace(config, models=RoleModels.given(self._chat_model))
        return config

    def _item(self, failed: FailedExtraction, status: str, summary: str) -> ReviewItem:
        ext = failed.extraction
        return ReviewItem(
            app=self.app,
            kind=KIND,
            id=str(ext.id),
            sort_id=ext.id,
            title=f"Extraction {ext.id} of {failed.filename} failed",
            status=status,
            created_at=_utc(ext.updated_at),
            summary=summary,
        )

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        found = self.deps.repo.failed_extractions(
            self._decided(filters), filters, limit=limit, before=before
        )
        return [
            self._item(
                f,
                filters.status,
                f"document {f.extraction.document_id}, {f.extraction.method}: "
                f"{f.extraction.reason[:160] or '(no reason recorded)'}",
            )
            for f in found
        ]

    def count(self, filters: ReviewFilters) -> int:
        return self.deps.repo.count_failed_extractions(self._decided(filters), filters)

    # ------------------------------------------------------------------ one item
    def get(self, item_id: str) -> ReviewDetail:
        repo = self.deps.repo
        failed = repo.failed_extraction(_extraction_id(item_id))
        ext, doc_id = failed.extraction, failed.extraction.document_id
        owner = extraction_owner(self.deps, failed.owner_id)
        read = repo.document_text(owner.user_id, doc_id)
        body, pages = read if read is not None else ("", 0)
        settled = settled_review(self.deps, ext.id)
        item = self._item(
            failed,
            WAITING if settled is None else DECIDED,
            f"document {doc_id} of {owner.name}, {pages} page(s), method {ext.method}",
        )
        decision = _failure_decision(failed, owner.name, pages)
        fields = _extracted_fields(ext)
        history = repo.extractions_of(owner.user_id, doc_id)
        sections = [
            Section(
                title=f"Extracted fields (type {ext.document_type or 'unknown'})",
                kind="fields",
                fields=fields or {"(none)": "nothing was extracted before the failure"},
            ),
            Section(
                title=f"Document text: {failed.filename}",
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
            trajectory=repo.extraction_tool_calls(failed.owner_id, ext.id),
            sections=sections,
            actions=["approve", "edit", "reject"] if settled is None else [],
            action_labels=LABELS,
            edit_label='Corrected fields (JSON, e.g. {"total": "45.10"})',
            edit_value=json.dumps(
                {k: v for k, v in (ext.fields or {}).items() if k != "document_type"},
                ensure_ascii=False,
                default=str,
            ),
        )
        if settled is None:
            return detail
        return replace(
            detail,
            decided_by=settled.decided_by,
            decided_at=settled.decided_at,
            outcome=settled.outcome,
        )

    # ------------------------------------------------------------------ deciding
    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        return decide_failed_extraction(
            self.deps,
            _extraction_id(item_id),
            action,
            note=note,
            actor=caller.name,
            strategy=self.strategy,
            config=self._config(),
            background=self.background,
            edit=edit,
        )

    # ------------------------------------------------------------------ live runs
    def run_fields(self) -> list[RunField]:
        return []

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        raise InputError("Extractions start from `casework documents extract`, not this page.")


def _failure_decision(failed: FailedExtraction, owner_name: str, pages: int) -> Decision:
    """The failed extraction as a decision: the reason it failed, the document and the run."""
    ext, doc_id = failed.extraction, failed.extraction.document_id
    return Decision(
        verdict="failed",
        confidence=0,
        reasoning=ext.reason or "(no reason recorded)",
        evidence=[
            Evidence(
                source="documents",
                ref=f"document {doc_id}",
                summary=f"{failed.filename} ({failed.media_type}, {pages} page(s)) "
                f"of {owner_name}.",
                fields={"filename": failed.filename, "pages": pages},
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


def _extracted_fields(ext: ExtractionInfo) -> dict[str, str]:
    """The fields written before the failure, with their confidence; requested ones missing."""
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
    return fields
