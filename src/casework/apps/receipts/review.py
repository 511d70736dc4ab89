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

from collections.abc import Iterator
from dataclasses import replace

from langchain_core.language_models import BaseChatModel

from casework.apikit import DepsCache
from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.models import (
    HUMAN,
    LABEL_DEFINITIONS,
    Label,
    LabelInput,
    Receipt,
    ValidationStatus,
    WordRef,
)
from casework.apps.receipts.service import (
    STRATEGIES,
    review_decide,
    review_edit,
    review_example,
    validation_events,
)
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller
from casework.runtime.decision import Decision, Evidence
from casework.runtime.events import Event
from casework.runtime.memory import ExampleDraft
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
from casework.stores.sql import as_utc

__all__ = ["DECIDED", "KIND", "ReceiptsReview"]

KIND = "needs_review_label"
DECIDED = "decided"


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
    return who.removeprefix(HUMAN)


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
        self._deps = DepsCache(build_deps, None if deps is None else lambda: deps)
        self._chat_model = chat_model
        """A chat model for live agent runs instead of the configured one (tests: scripted)."""

    @property
    def deps(self) -> ReceiptsDeps:
        return self._deps.get(self.settings)

    # ------------------------------------------------------------------ listing
    def _decided(self, filters: ReviewFilters) -> bool:
        return known_status(filters, self.statuses) == DECIDED

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        items = []
        for q in self.deps.repo.inbox_labels(
            self._decided(filters), filters, limit=limit, before=before
        ):
            old = q.instead_of
            instead = f" instead of {old}" if old and old != q.label_type else ""
            confidence = f"{q.confidence:.0f}%" if q.confidence is not None else "no confidence"
            items.append(
                ReviewItem(
                    app=self.app,
                    kind=KIND,
                    id=str(q.id),
                    sort_id=q.id,
                    title=f"{q.word_text!r} as {q.label_type}{instead}",
                    status=filters.status,
                    created_at=as_utc(q.created_at) or q.created_at,
                    summary=f"{q.merchant_name or q.receipt_slug}, line {q.line_id}, "
                    f"{confidence}: {q.reasoning[:160]}",
                )
            )
        return items

    def count(self, filters: ReviewFilters) -> int:
        return self.deps.repo.count_inbox_labels(self._decided(filters), filters)

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
        decision = _label_decision(label, receipt, old, where)
        words = repo.words(label.receipt_pk)
        lines: dict[int, list[Span]] = {}
        for w in sorted(words, key=lambda w: (w.line_id, w.word_id)):
            spans = lines.setdefault(w.line_id, [Span(f"{w.line_id:>3} ")])
            spans.append(Span(w.text, highlight=w.id == label.word_pk))
        sections = [
            Section(
                title=f"Receipt: {receipt.merchant_name}", kind="lines", lines=list(lines.values())
            ),
            _history_section(history),
        ]
        item = ReviewItem(
            app=self.app,
            kind=KIND,
            id=str(label.id),
            sort_id=label.id,
            title=f"{label.word_text!r} as {label.label_type}",
            status=WAITING if successor is None else DECIDED,
            created_at=as_utc(label.created_at) or label.created_at,
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
            decided_at=as_utc(successor.validated_at or successor.created_at),
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
                rows = review_edit(self.deps, label.id, edit or "", reviewer=caller.name, note=note)
            else:
                raise InputError(f"Unknown action {action!r}; use approve, edit or reject.")
        except InputError:
            # Lost a race: the unique replaces_id let exactly one decision in.
            first = self._successor(label)
            if first is None:
                raise
            return self._first(label, first)
        outcome = _outcome(label, rows[0])
        return DecideOutcome(
            applied=True,
            outcome=outcome,
            decided_by=caller.name,
            decided_at=as_utc(rows[0].validated_at or rows[0].created_at),
            example=self._example(label, rows[0], outcome),
        )

    def _example(self, label: Label, successor: Label, outcome: str) -> ExampleDraft:
        """What the decision verified, as an example (``casework.examples.learn_from_review``
        stores it): the word's right label, or, rejected, that its label is not it."""
        receipt = self.deps.repo.get_receipt(label.receipt_pk)
        ref = WordRef(
            image_id=receipt.image_id,
            receipt_id=receipt.receipt_id,
            line_id=label.line_id,
            word_id=label.word_id,
            suggested_label=label.label_type,
            word_text=label.word_text,
            merchant_name=receipt.merchant_name,
        )
        if outcome == "rejected":
            return review_example(self.deps, ref, {"not": label.label_type})
        return review_example(self.deps, ref, {"label": successor.label_type})

    def _first(self, label: Label, successor: Label) -> DecideOutcome:
        return DecideOutcome(
            applied=False,
            outcome=_outcome(label, successor),
            decided_by=_who(successor.validated_by),
            decided_at=as_utc(successor.validated_at or successor.created_at),
        )

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
        try:
            line_id, word_id = int(params.get("line_id", "")), int(params.get("word_id", ""))
        except ValueError:
            raise InputError("Line and word must be whole numbers, e.g. 12 and 4.") from None
        request = LabelInput(
            receipt=params.get("receipt", "").strip(),
            line_id=line_id,
            word_id=word_id,
            suggested_label=params.get("label", ""),
        )
        config = RunConfig.of(self.settings, caller=caller)
        if self._chat_model is not None:
            config = replace(config, models=RoleModels.given(self._chat_model))
        return validation_events(
            self.deps,
            request,
            config,
            params.get("strategy", "agent"),
            proposed_by=f"web:{caller.name}",
        )


def _label_decision(label: Label, receipt: Receipt, old: Label | None, where: str) -> Decision:
    """The label as a decision: the word, the label, and the one it would replace."""
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
    return Decision(
        verdict=label.status.value,
        confidence=label.confidence or 0.0,
        reasoning=label.reasoning or "(no reasoning recorded)",
        evidence=evidence,
    )


def _history_section(history: list[Label]) -> Section:
    """Every label row of the word, oldest first."""
    return Section(
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
    )
