"""The receipts app's review provider: its NEEDS_REVIEW labels in the platform inbox.

Items are current NEEDS_REVIEW labels ("waiting") and NEEDS_REVIEW labels a person settled
("decided"). Accept and reject go through ``service.review_decide``, the function behind
`casework receipts review accept|reject`; edit accepts the word under another label type in one
transaction. A label is superseded at most once (unique ``replaces_id``), so a second decision
changes nothing and reads who decided first from the row that superseded it.

Live runs: validate one word with the agent (or the baseline) and record the result, yielding
the runtime's events as they happen.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from sqlalchemy import exists, func, select
from sqlalchemy.orm import aliased

from casework.apps.receipts.agent import agent_for, decision_from_run, render_task
from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.models import (
    LABEL_DEFINITIONS,
    Label,
    LabelDecision,
    LabelInput,
    ValidationStatus,
    WordRef,
)
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import check_label, record_result, resolve_ref, review_decide
from casework.apps.receipts.strategies import (
    AGENT_ROLE,
    STRATEGIES,
    LabelStrategy,
    decision_json,
    strategy,
)
from casework.apps.receipts.tables import LabelRow, ReceiptRow, WordRow
from casework.apps.receipts.vectors import refresh_words
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller
from casework.runtime.decision import Decision, Evidence
from casework.runtime.events import Event, to_json
from casework.runtime.react import RunResult
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

__all__ = ["DECIDED", "KIND", "ReceiptsReview"]

KIND = "needs_review_label"
DECIDED = "decided"
_HUMAN = "human:"


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _label_id(item_id: str) -> int:
    if not item_id.isdigit():
        raise NotFoundError(f"No receipts review item {item_id!r}; open one from the inbox.")
    return int(item_id)


def _outcome(review: Label | None, successor: Label) -> str:
    if successor.status == ValidationStatus.INVALID:
        return "rejected"
    if review is not None and successor.label_type != review.label_type:
        return f"edited to {successor.label_type}"
    return "accepted"


def _who(validated_by: str | None) -> str:
    who = validated_by or "unknown"
    return who.removeprefix(_HUMAN)


class ReceiptsReview:
    """``ReviewProvider`` over the receipts labels; deps are opened on first use."""

    app = "receipts"
    kinds = [KIND]
    statuses = [WAITING, DECIDED]

    def __init__(
        self,
        settings: Settings,
        *,
        deps: ReceiptsDeps | None = None,
        chat_model: BaseChatModel | None = None,
    ) -> None:
        self.settings = settings
        self._deps = deps
        self._chat_model = chat_model
        """A chat model for live agent runs instead of the configured one (tests: scripted)."""
        self._lock = threading.Lock()

    @property
    def deps(self) -> ReceiptsDeps:
        with self._lock:
            if self._deps is None:
                self._deps = build_deps(self.settings)
            return self._deps

    # ------------------------------------------------------------------ listing
    def _where(self, filters: ReviewFilters) -> list[Any]:
        successor = aliased(LabelRow)
        where: list[Any] = [LabelRow.status == ValidationStatus.NEEDS_REVIEW.value]
        if filters.status == WAITING:
            where.append(~exists().where(successor.replaces_id == LabelRow.id))
        elif filters.status == DECIDED:
            where.append(
                exists().where(
                    successor.replaces_id == LabelRow.id,
                    successor.validated_by.startswith(_HUMAN),
                )
            )
        else:
            raise InputError(
                f"Unknown status {filters.status!r}; use one of: {', '.join(self.statuses)}."
            )
        where += age_window(LabelRow.created_at, filters)
        return where

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        where = self._where(filters)
        where += keyset_before(LabelRow.created_at, LabelRow.id, before)
        replaced = aliased(LabelRow)
        q = (
            select(
                LabelRow.id,
                LabelRow.label_type,
                LabelRow.created_at,
                LabelRow.confidence,
                LabelRow.reasoning,
                WordRow.text,
                WordRow.line_id,
                ReceiptRow.slug,
                ReceiptRow.merchant_name,
                replaced.label_type,
            )
            .join(WordRow, WordRow.id == LabelRow.word_pk)
            .join(ReceiptRow, ReceiptRow.id == LabelRow.receipt_pk)
            .outerjoin(replaced, replaced.id == LabelRow.consolidated_from_id)
            .where(*where)
            .order_by(LabelRow.created_at.desc(), LabelRow.id.desc())
            .limit(limit)
        )
        items = []
        with session_scope(self.deps.repo.engine) as s:
            for lid, label, created, conf, reasoning, text, line, slug, merchant, old in s.execute(
                q
            ):
                instead = f" instead of {old}" if old and old != label else ""
                confidence = f"{conf:.0f}%" if conf is not None else "no confidence"
                items.append(
                    ReviewItem(
                        app=self.app,
                        kind=KIND,
                        id=str(lid),
                        sort_id=lid,
                        title=f"{text!r} as {label}{instead}",
                        status=filters.status,
                        created_at=_utc(created) or created,
                        summary=f"{merchant or slug}, line {line}, {confidence}: {reasoning[:160]}",
                    )
                )
        return items

    def count(self, filters: ReviewFilters) -> int:
        q = select(func.count()).select_from(LabelRow).where(*self._where(filters))
        with session_scope(self.deps.repo.engine) as s:
            return int(s.scalar(q) or 0)

    # ------------------------------------------------------------------ one item
    def _review_label(self, label_id: int) -> Label:
        label = self.deps.repo.get_label(label_id)
        if label.status != ValidationStatus.NEEDS_REVIEW:
            raise NotFoundError(
                f"Label {label_id} is {label.status.value}, not a review item; "
                "open one from the inbox."
            )
        return label

    def _successor(self, label: Label) -> Label | None:
        later = [x for x in self.deps.repo.labels_for_word(label.word_pk) if x.id > label.id]
        return next((x for x in later if x.replaces_id == label.id), None)

    def get(self, item_id: str) -> ReviewDetail:
        repo = self.deps.repo
        label = self._review_label(_label_id(item_id))
        receipt = repo.get_receipt(label.receipt_pk)
        history = repo.labels_for_word(label.word_pk)
        successor = next((x for x in history if x.replaces_id == label.id), None)
        old = next((x for x in history if x.id == label.consolidated_from_id), None)
        where = f"{receipt.slug} line {label.line_id} word {label.word_id}"
        evidence = [
            Evidence(
                source="receipts_words",
                ref=where,
                summary=f"The word {label.word_text!r} on the {receipt.merchant_name} receipt.",
                fields={"receipt": receipt.key, "text": label.word_text},
            ),
            Evidence(
                source="receipts_labels",
                ref=f"label {label.id}",
                summary=f"{label.label_type} proposed by {label.proposed_by}, "
                f"validated by {label.validated_by or 'nobody'}.",
                fields={"label": label.label_type, "status": label.status.value},
            ),
        ]
        if old is not None and old.label_type != label.label_type:
            evidence.append(
                Evidence(
                    source="receipts_labels",
                    ref=f"label {old.id}",
                    summary=f"It would replace {old.label_type} ({old.status.value}).",
                    fields={"label": old.label_type, "status": old.status.value},
                )
            )
        decision = Decision(
            verdict=label.status.value,
            confidence=label.confidence or 0.0,
            reasoning=label.reasoning or "(no reasoning recorded)",
            evidence=evidence,
        )
        words = repo.words(label.receipt_pk)
        lines: dict[int, list[Span]] = {}
        for w in sorted(words, key=lambda w: (w.line_id, w.word_id)):
            spans = lines.setdefault(w.line_id, [Span(f"{w.line_id:>3} ")])
            spans.append(Span(w.text, highlight=w.id == label.word_pk))
        sections = [
            Section(
                title=f"Receipt: {receipt.merchant_name}", kind="lines", lines=list(lines.values())
            ),
            Section(
                title="Label history of the word",
                kind="table",
                columns=[
                    "id",
                    "label",
                    "status",
                    "confidence",
                    "proposed by",
                    "validated by",
                    "reasoning",
                ],
                rows=[
                    [
                        x.id,
                        x.label_type,
                        x.status.value,
                        "" if x.confidence is None else f"{x.confidence:.0f}",
                        x.proposed_by,
                        x.validated_by or "",
                        x.reasoning,
                    ]
                    for x in history
                ],
            ),
        ]
        item = ReviewItem(
            app=self.app,
            kind=KIND,
            id=str(label.id),
            sort_id=label.id,
            title=f"{label.word_text!r} as {label.label_type}",
            status=WAITING if successor is None else DECIDED,
            created_at=_utc(label.created_at) or label.created_at,
            summary=where,
        )
        detail = ReviewDetail(
            item=item,
            decision=decision,
            sections=sections,
            actions=["approve", "edit", "reject"] if successor is None else [],
            edit_label="Label",
            edit_value=label.label_type,
            edit_choices=sorted(set(LABEL_DEFINITIONS) | {label.label_type}),
        )
        if successor is None:
            return detail
        return replace(
            detail,
            decided_by=_who(successor.validated_by),
            decided_at=_utc(successor.validated_at or successor.created_at),
            outcome=_outcome(label, successor),
        )

    # ------------------------------------------------------------------ deciding
    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        label = self._review_label(_label_id(item_id))
        first = self._successor(label)
        if first is not None:
            return self._first(label, first)
        try:
            if action == "approve":
                rows = review_decide(
                    self.deps, label.id, accept=True, reviewer=caller.name, note=note
                )
            elif action == "reject":
                rows = review_decide(
                    self.deps, label.id, accept=False, reviewer=caller.name, note=note
                )
            elif action == "edit":
                rows = self._edit(label, edit or "", caller, note)
            else:
                raise InputError(f"Unknown action {action!r}; use approve, edit or reject.")
        except InputError:
            # Lost a race: the unique replaces_id let exactly one decision in.
            first = self._successor(label)
            if first is None:
                raise
            return self._first(label, first)
        return DecideOutcome(
            applied=True,
            outcome=_outcome(label, rows[0]),
            decided_by=caller.name,
            decided_at=_utc(rows[0].validated_at or rows[0].created_at),
        )

    def _first(self, label: Label, successor: Label) -> DecideOutcome:
        return DecideOutcome(
            applied=False,
            outcome=_outcome(label, successor),
            decided_by=_who(successor.validated_by),
            decided_at=_utc(successor.validated_at or successor.created_at),
        )

    def _edit(self, label: Label, new_type: str, caller: Caller, note: str) -> list[Label]:
        """Accept the word under ``new_type``: the review row is replaced by a VALID label of that
        type, and the label the suggestion would have replaced is marked INVALID (one transaction)."""
        deps = self.deps
        new_type = check_label(deps, new_type)
        if new_type == label.label_type:
            return review_decide(deps, label.id, accept=True, reviewer=caller.name, note=note)
        who = f"{_HUMAN}{caller.name}"
        changes = [
            LabelChange(
                word_pk=label.word_pk,
                label_type=new_type,
                status=ValidationStatus.VALID,
                proposed_by=label.proposed_by,
                reasoning=note
                or f"Review edited {label.label_type} to {new_type} by {caller.name}.",
                confidence=100.0,
                validated_by=who,
                replaces_id=label.id,
                consolidated_from_id=label.consolidated_from_id or label.id,
            )
        ]
        if label.consolidated_from_id:
            old = deps.repo.get_label(label.consolidated_from_id)
            if old.current and old.label_type != new_type:
                changes.append(
                    LabelChange(
                        word_pk=old.word_pk,
                        label_type=old.label_type,
                        status=ValidationStatus.INVALID,
                        proposed_by=old.proposed_by,
                        reasoning=f"Replaced by {new_type} (review of label {label.id} edited by {caller.name}).",
                        confidence=100.0,
                        validated_by=who,
                        replaces_id=old.id,
                    )
                )
        rows = deps.repo.append_labels(changes)
        if deps.vectors is not None:
            # As in review_decide: labels are committed; `receipts index --all` repairs stale vectors.
            with contextlib.suppress(Exception):
                refresh_words(
                    deps.repo,
                    deps.vectors,
                    deps.repo.get_receipt(label.receipt_pk),
                    {label.word_pk},
                )
        return rows

    # ------------------------------------------------------------------ live runs
    def run_fields(self) -> list[RunField]:
        return [
            RunField("receipt", "Receipt (slug)", "wildfork"),
            RunField("line_id", "Line", "12"),
            RunField("word_id", "Word", "4"),
            RunField("label", "Suggested label", "UNIT_PRICE", choices=sorted(LABEL_DEFINITIONS)),
            RunField("strategy", "Strategy", "agent", choices=list(STRATEGIES)),
        ]

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        deps = self.deps
        name = params.get("strategy", "agent")
        decide = strategy(name)
        try:
            line_id, word_id = int(params.get("line_id", "")), int(params.get("word_id", ""))
        except ValueError:
            raise InputError("Line and word must be whole numbers, e.g. 12 and 4.") from None
        ref = resolve_ref(
            deps, params.get("receipt", "").strip(), line_id, word_id, params.get("label", "")
        )
        config = RunConfig.of(self.settings, caller=caller)
        if self._chat_model is not None:
            config = replace(config, models=RoleModels.given(self._chat_model))
        if name != "agent":
            return self._run_strategy(deps, ref, decide, config, caller)
        return self._run_agent(deps, ref, config, caller)

    def _run_strategy(
        self,
        deps: ReceiptsDeps,
        ref: WordRef,
        decide: LabelStrategy,
        config: RunConfig,
        caller: Caller,
    ) -> Iterator[Event]:
        """Rules and baseline run no agent: no events until the decision."""
        given = LabelInput(
            receipt=ref.receipt_key,
            line_id=ref.line_id,
            word_id=ref.word_id,
            suggested_label=ref.suggested_label,
        )
        yield self._complete(deps, ref, decide(given, deps, config), caller)

    def _run_agent(
        self, deps: ReceiptsDeps, ref: WordRef, config: RunConfig, caller: Caller
    ) -> Iterator[Event]:
        """The agent strategy, streamed: the same agent, policy and calibration as
        ``strategies.agent``, but its events reach the page while it runs."""
        run: RunResult[LabelDecision] | None = None
        model = config.models(AGENT_ROLE)
        for event in agent_for(deps, model, config).iter_events(render_task(ref), context=ref):
            if event["type"] == "complete":  # ours comes last, after the label is recorded
                run = event["result"]
            else:
                yield to_json(event)
        assert run is not None  # iter_events always ends with complete
        name = config.models.name(AGENT_ROLE)
        calibration = deps.calibration("agent", name) if deps.calibration else None
        result = decision_from_run(run, model=name, calibration=calibration)
        yield self._complete(deps, ref, result, caller)

    def _complete(
        self, deps: ReceiptsDeps, ref: WordRef, result: LabelDecision, caller: Caller
    ) -> Event:
        labels = record_result(deps, ref, result, proposed_by=f"web:{caller.name}")
        run = result.run
        return {
            "type": "complete",
            "result": decision_json(ref, result),
            "ended_by": run.ended_by.value if run is not None else None,
            "usage": run.usage.to_dict() if run is not None else {},
            "items": [str(x.id) for x in labels if x.status == ValidationStatus.NEEDS_REVIEW],
        }
