"""Labels, append-only: every change is a new row linked to the row it supersedes; nothing
here ever UPDATEs or DELETEs a label. Label changes need a receipt the tenant may write.
Also the review inbox's reads over them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from casework.apps.receipts.models import (
    HUMAN,
    Label,
    QueuedLabel,
    ValidationStatus,
)
from casework.apps.receipts.repository.tenancy import TenantScope, utc_now
from casework.apps.receipts.tables import (
    LabelRow,
    ReceiptRow,
    WordRow,
)
from casework.errors import InputError, NotFoundError
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before
from casework.stores.sql import session_scope


@dataclass(frozen=True)
class WaitingLabel:
    """A label proposed for review, created at a given instant (a seeded queue spreads them
    over days)."""

    word_pk: int
    label_type: str
    proposed_by: str
    reasoning: str
    confidence: float
    created_at: datetime


@dataclass(frozen=True)
class LabelChange:
    """One new label row to append."""

    word_pk: int
    label_type: str
    status: ValidationStatus
    proposed_by: str
    reasoning: str = ""
    confidence: float | None = None
    validated_by: str | None = None
    replaces_id: int | None = None
    consolidated_from_id: int | None = None

    @classmethod
    def retiring(
        cls, label: Label, reasoning: str, *, confidence: float | None, validated_by: str
    ) -> LabelChange:
        """The INVALID row that replaces ``label`` (its word, type and proposer kept)."""
        return cls(
            word_pk=label.word_pk,
            label_type=label.label_type,
            status=ValidationStatus.INVALID,
            proposed_by=label.proposed_by,
            reasoning=reasoning,
            confidence=confidence,
            validated_by=validated_by,
            replaces_id=label.id,
        )


class LabelStore(TenantScope):
    """Labels and the review inbox, scoped by the tenant."""

    def _labels(
        self, s: Session, where: Iterable, *, current_only: bool, limit: int | None = None
    ) -> list[Label]:
        successor = aliased(LabelRow)
        has_successor = exists().where(successor.replaces_id == LabelRow.id)
        q = (
            select(LabelRow, WordRow.line_id, WordRow.word_id, WordRow.text, has_successor)
            .join(WordRow, WordRow.id == LabelRow.word_pk)
            .where(*where, *self._through_receipt(LabelRow.receipt_pk))
            .order_by(LabelRow.id)
        )
        if current_only:
            q = q.where(~has_successor)
        if limit is not None:
            q = q.limit(limit)
        out = []
        for row, line_id, word_id, text, superseded in s.execute(q):
            out.append(
                Label(
                    id=row.id,
                    receipt_pk=row.receipt_pk,
                    word_pk=row.word_pk,
                    line_id=line_id,
                    word_id=word_id,
                    word_text=text,
                    label_type=row.label_type,
                    status=ValidationStatus(row.status),
                    reasoning=row.reasoning,
                    confidence=row.confidence,
                    proposed_by=row.proposed_by,
                    validated_by=row.validated_by,
                    created_at=row.created_at,
                    validated_at=row.validated_at,
                    replaces_id=row.replaces_id,
                    consolidated_from_id=row.consolidated_from_id,
                    current=not superseded,
                )
            )
        return out

    def labels_for_word(self, word_pk: int) -> list[Label]:
        """Every label row of a word, oldest first (current and superseded)."""
        with session_scope(self.engine) as s:
            return self._labels(s, [LabelRow.word_pk == word_pk], current_only=False)

    def get_label(self, label_id: int) -> Label:
        with session_scope(self.engine) as s:
            labels = self._labels(s, [LabelRow.id == label_id], current_only=False)
            if not labels:
                raise NotFoundError(f"No label with id {label_id}.")
            return labels[0]

    def current_labels(
        self,
        *,
        receipt_pk: int | None = None,
        merchant: str | None = None,
        statuses: Sequence[ValidationStatus] | None = None,
        limit: int | None = None,
    ) -> list[Label]:
        """Labels nobody superseded (oldest first), optionally for one receipt or merchant."""
        where: list = []
        if receipt_pk is not None:
            where.append(LabelRow.receipt_pk == receipt_pk)
        if merchant:
            where.append(
                LabelRow.receipt_pk.in_(
                    select(ReceiptRow.id).where(
                        func.lower(ReceiptRow.merchant_name) == merchant.lower()
                    )
                )
            )
        if statuses:
            where.append(LabelRow.status.in_([s.value for s in statuses]))
        with session_scope(self.engine) as s:
            return self._labels(s, where, current_only=True, limit=limit)

    def known_label_types(self) -> set[str]:
        with session_scope(self.engine) as s:
            q = select(LabelRow.label_type).where(*self._through_receipt(LabelRow.receipt_pk))
            return set(s.scalars(q.distinct()))

    def count_labels(self) -> int:
        with session_scope(self.engine) as s:
            q = select(func.count()).select_from(LabelRow)
            return s.scalar(q.where(*self._through_receipt(LabelRow.receipt_pk))) or 0

    def append_labels(self, changes: Sequence[LabelChange]) -> list[Label]:
        """Append label rows in one transaction. A label already superseded can't be again."""
        now = utc_now()
        with session_scope(self.engine) as s:
            rows = []
            for ch in changes:
                word = s.scalar(
                    select(WordRow).where(
                        WordRow.id == ch.word_pk, *self._through_receipt(WordRow.receipt_pk)
                    )
                )
                if word is None:
                    raise NotFoundError(f"No word with id {ch.word_pk}.")
                self._require_writable(s, word.receipt_pk)
                for ref in (ch.replaces_id, ch.consolidated_from_id):
                    found = ref is None or s.scalar(
                        select(LabelRow.id).where(
                            LabelRow.id == ref,
                            *self._through_receipt(LabelRow.receipt_pk),
                        )
                    )
                    if not found:
                        raise NotFoundError(f"No label with id {ref}.")
                decided = ch.status in (ValidationStatus.VALID, ValidationStatus.INVALID)
                row = LabelRow(
                    receipt_pk=word.receipt_pk,
                    word_pk=ch.word_pk,
                    label_type=ch.label_type,
                    status=ch.status.value,
                    reasoning=ch.reasoning[:4000],
                    confidence=ch.confidence,
                    proposed_by=ch.proposed_by,
                    validated_by=ch.validated_by,
                    created_at=now,
                    validated_at=now if decided and ch.validated_by else None,
                    replaces_id=ch.replaces_id,
                    consolidated_from_id=ch.consolidated_from_id,
                )
                s.add(row)
                try:
                    s.flush()
                except IntegrityError as exc:
                    raise InputError(
                        f"Label {ch.replaces_id} was already changed by another label; reload and retry."
                    ) from exc
                rows.append(row.id)
            labels = self._labels(s, [LabelRow.id.in_(rows)], current_only=False)
        return labels

    def add_waiting_labels(self, waiting: Sequence[WaitingLabel]) -> int:
        """Many NEEDS_REVIEW labels at their own instants in one INSERT (a review queue of
        10,000 items is seeded in a second); returns the newest one's id."""
        if not waiting:
            raise InputError("Name at least one label to queue for review.")
        with session_scope(self.engine) as s:
            receipt_of = dict(
                s.execute(
                    select(WordRow.id, WordRow.receipt_pk).where(
                        WordRow.id.in_({w.word_pk for w in waiting}),
                        *self._through_receipt(WordRow.receipt_pk),
                    )
                ).all()
            )
            missing = sorted({w.word_pk for w in waiting} - set(receipt_of))
            if missing:
                raise NotFoundError(f"No word with id {missing[0]}.")
            for receipt_pk in set(receipt_of.values()):
                self._require_writable(s, receipt_pk)
            s.execute(
                insert(LabelRow),
                [
                    {
                        "receipt_pk": receipt_of[w.word_pk],
                        "word_pk": w.word_pk,
                        "label_type": w.label_type,
                        "status": ValidationStatus.NEEDS_REVIEW.value,
                        "reasoning": w.reasoning[:4000],
                        "confidence": w.confidence,
                        "proposed_by": w.proposed_by,
                        "created_at": w.created_at,
                    }
                    for w in waiting
                ],
            )
            return int(s.scalar(select(func.max(LabelRow.id))) or 0)

    def review_queue(self, *, merchant: str | None = None, limit: int = 100) -> list[Label]:
        return self.current_labels(
            merchant=merchant, statuses=[ValidationStatus.NEEDS_REVIEW], limit=limit
        )

    # ------------------------------------------------------------------ the review inbox
    def _inbox_where(self, decided: bool, filters: ReviewFilters) -> list[Any]:
        """NEEDS_REVIEW labels nobody superseded yet (waiting), or that a person's decision
        superseded (decided)."""
        successor = aliased(LabelRow)
        where: list[Any] = [LabelRow.status == ValidationStatus.NEEDS_REVIEW.value]
        if decided:
            where.append(
                exists().where(
                    successor.replaces_id == LabelRow.id,
                    successor.validated_by.startswith(HUMAN),
                )
            )
        else:
            where.append(~exists().where(successor.replaces_id == LabelRow.id))
        where += self._through_receipt(LabelRow.receipt_pk)
        return where + age_window(LabelRow.created_at, filters)

    def inbox_labels(
        self, decided: bool, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[QueuedLabel]:
        """The review inbox's labels, newest first."""
        where = self._inbox_where(decided, filters)
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
        with session_scope(self.engine) as s:
            return [
                QueuedLabel(
                    id=lid,
                    label_type=label,
                    created_at=created,
                    confidence=conf,
                    reasoning=reasoning,
                    word_text=text,
                    line_id=line,
                    receipt_slug=slug,
                    merchant_name=merchant,
                    instead_of=old,
                )
                for lid, label, created, conf, reasoning, text, line, slug, merchant, old in (
                    s.execute(q)
                )
            ]

    def count_inbox_labels(self, decided: bool, filters: ReviewFilters) -> int:
        q = select(func.count()).select_from(LabelRow).where(*self._inbox_where(decided, filters))
        with session_scope(self.engine) as s:
            return int(s.scalar(q) or 0)

    def label_types(self, label_ids: Iterable[int]) -> dict[int, str]:
        """The label type of each id, in one query (ids that don't exist are left out)."""
        ids = sorted(set(label_ids))
        if not ids:
            return {}
        with session_scope(self.engine) as s:
            q = select(LabelRow.id, LabelRow.label_type).where(
                LabelRow.id.in_(ids), *self._through_receipt(LabelRow.receipt_pk)
            )
            return {label_id: label_type for label_id, label_type in s.execute(q)}

    def visible_keys(self, keys: Iterable[str]) -> set[str]:
        """The receipt keys (``image_id#n``) among ``keys`` the tenant may read, in one query."""
        wanted = set(keys)
        if self.tenant is None or not wanted:
            return wanted
        image_ids = {key.rpartition("#")[0] for key in wanted}
        with session_scope(self.engine) as s:
            q = select(ReceiptRow.image_id, ReceiptRow.receipt_id).where(
                ReceiptRow.image_id.in_(image_ids), *self._visible()
            )
            return {f"{image_id}#{n}" for image_id, n in s.execute(q)} & wanted

    def slugs(self) -> dict[int, str]:
        """Every receipt's slug by its id."""
        with session_scope(self.engine) as s:
            q = select(ReceiptRow.id, ReceiptRow.slug).where(*self._visible())
            return {pk: slug for pk, slug in s.execute(q)}
