"""Receipts, words, places, labels and edge cases in SQL; returns domain models.

Labels are append-only. Every change (validation, relabel, review) is a new row linked to
the row it supersedes; nothing here ever UPDATEs or DELETEs a label.

A repository is bound to a tenant (``for_tenant``), never told one per call: every read sees
the tenant's own receipts plus the shared ones (owner NULL), and lines, words, labels and
places are reached only through a visible receipt, so another user's row answers exactly as
one that does not exist. Label changes need a receipt the tenant may write: its own, or a
shared one when the tenant is a reviewer or admin (they curate the shared set). The tenant
``None`` is the local operator (CLI, evals, seeding): everything, unscoped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from sqlalchemy import ColumnElement, Engine, and_, exists, func, insert, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from casework.apps.receipts.importer import ParsedReceipt
from casework.apps.receipts.models import (
    HUMAN,
    Box,
    EdgeCase,
    Label,
    Line,
    Place,
    QueuedLabel,
    Receipt,
    ValidationStatus,
    Word,
)
from casework.apps.receipts.rules import normalize
from casework.apps.receipts.tables import (
    EdgeCaseRow,
    LabelRow,
    LineRow,
    PlaceRow,
    ReceiptRow,
    WordRow,
)
from casework.errors import InputError, NotFoundError
from casework.runtime.context import (
    Caller,
    PermissionDenied,
    Role,
    owner_for,
    visible_to,
    writable_by,
)
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before
from casework.stores.sql import session_scope

__all__ = ["LabelChange", "ReceiptsRepository"]


_VERSION_SQL = (
    f"SELECT (SELECT max(id) FROM {ReceiptRow.__tablename__}),"
    f" (SELECT max(id) FROM {LabelRow.__tablename__})"
)


def _now() -> datetime:
    return datetime.now(UTC)


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


class ReceiptsRepository:
    """Receipts in SQL (SQLite or PostgreSQL); every method opens and closes its own session."""

    def __init__(self, engine: Engine, tenant: Caller | None = None) -> None:
        self.engine = engine
        self.tenant = tenant

    def for_tenant(self, tenant: Caller | None) -> ReceiptsRepository:
        """The same store seen by ``tenant`` (``None``: the local operator, unscoped)."""
        return ReceiptsRepository(self.engine, tenant)

    # ------------------------------------------------------------------ tenancy
    def _visible(self) -> list[ColumnElement[bool]]:
        """WHERE clauses on ReceiptRow: the tenant's receipts and the shared ones."""
        return [] if self.tenant is None else [visible_to(ReceiptRow.owner_id, self.tenant)]

    def _through_receipt(self, receipt_pk: Any) -> list[ColumnElement[bool]]:
        """WHERE clauses for rows that belong to the owner of their receipt (lines, words, labels)."""
        if self.tenant is None:
            return []
        return [receipt_pk.in_(select(ReceiptRow.id).where(*self._visible()))]

    def _writable(self) -> ColumnElement[bool]:
        """WHERE clause on ReceiptRow for label changes: own receipts; shared ones for reviewers."""
        own = writable_by(ReceiptRow.owner_id, self.tenant)
        if self.tenant is not None and self.tenant.has_role(Role.REVIEWER):
            return or_(own, ReceiptRow.owner_id.is_(None))
        return own

    def _require_writable(self, s: Session, receipt_pk: int) -> None:
        if self.tenant is None:
            return
        ok = s.scalar(select(ReceiptRow.id).where(ReceiptRow.id == receipt_pk, self._writable()))
        if ok is None:
            slug = s.scalar(select(ReceiptRow.slug).where(ReceiptRow.id == receipt_pk))
            raise PermissionDenied(
                f"Receipt {slug} is shared and read-only to you: only a reviewer or an admin "
                "changes its labels."
            )

    def require_writable(self, receipt_pk: int) -> None:
        """Raise PermissionDenied unless the tenant may change labels of this (visible) receipt."""
        with session_scope(self.engine) as s:
            self._require_writable(s, receipt_pk)

    # ------------------------------------------------------------------ import
    def add_receipts(
        self,
        parsed: Sequence[ParsedReceipt],
        *,
        status: ValidationStatus = ValidationStatus.VALID,
        proposed_by: str = "import",
    ) -> tuple[list[Receipt], list[str]]:
        """Write receipts (lines, words, labels, places) in one transaction.

        Receipts whose key is already stored are skipped (re-importing is idempotent); returns
        (added, skipped keys).
        """
        added: list[Receipt] = []
        skipped: list[str] = []
        now = _now()
        owner = owner_for(self.tenant)
        with session_scope(self.engine) as s:
            seen: set[tuple[str, int]] = set()
            for rec in parsed:
                key = (rec.image_id, rec.receipt_id)
                exists_row = s.scalar(
                    select(ReceiptRow.id).where(
                        ReceiptRow.image_id == key[0], ReceiptRow.receipt_id == key[1]
                    )
                )
                if exists_row is not None or key in seen:
                    skipped.append(rec.key)
                    continue
                seen.add(key)
                place = self._upsert_place(s, rec.place, now, owner)
                row = ReceiptRow(
                    owner_id=owner,
                    image_id=rec.image_id,
                    receipt_id=rec.receipt_id,
                    slug=self._free_slug(s, rec.slug),
                    merchant_name=rec.merchant_name,
                    source=rec.source[:400],
                    place_id=place.id,
                    width=rec.width,
                    height=rec.height,
                    extra_json=json.dumps(rec.extra, default=str)[:20000],
                    imported_at=now,
                )
                s.add(row)
                s.flush()
                self._add_lines_and_words(s, row.id, rec, status, proposed_by, now)
                added.append(self._receipt(s, row))
        return added, skipped

    @staticmethod
    def _add_lines_and_words(
        s: Session,
        receipt_pk: int,
        rec: ParsedReceipt,
        status: ValidationStatus,
        proposed_by: str,
        now: datetime,
    ) -> None:
        """Lines, words and imported labels in three batched INSERTs, not one per row."""
        s.execute(
            insert(LineRow),
            [
                {
                    "receipt_pk": receipt_pk,
                    "line_id": ln.line_id,
                    "text": ln.text,
                    "x0": ln.box.x0,
                    "y0": ln.box.y0,
                    "x1": ln.box.x1,
                    "y1": ln.box.y1,
                }
                for ln in rec.lines
            ],
        )
        words = [w for ln in rec.lines for w in ln.words]
        if not words:
            return
        s.execute(
            insert(WordRow),
            [
                {
                    "receipt_pk": receipt_pk,
                    "line_id": w.line_id,
                    "word_id": w.word_id,
                    "token_index": w.token_index,
                    "text": w.text,
                    "x0": w.box.x0,
                    "y0": w.box.y0,
                    "x1": w.box.x1,
                    "y1": w.box.y1,
                }
                for w in words
            ],
        )
        labelled = [w for w in words if w.label]
        if not labelled:
            return
        word_pks = {
            (line_id, word_id): pk
            for pk, line_id, word_id in s.execute(
                select(WordRow.id, WordRow.line_id, WordRow.word_id).where(
                    WordRow.receipt_pk == receipt_pk
                )
            )
        }
        validated = status == ValidationStatus.VALID
        reasoning = f"Imported from {Path(rec.source.split('[')[0]).name}."
        s.execute(
            insert(LabelRow),
            [
                {
                    "receipt_pk": receipt_pk,
                    "word_pk": word_pks[(w.line_id, w.word_id)],
                    "label_type": w.label,
                    "status": status.value,
                    "reasoning": reasoning,
                    "proposed_by": proposed_by,
                    "validated_by": proposed_by if validated else None,
                    "created_at": now,
                    "validated_at": now if validated else None,
                }
                for w in labelled
            ],
        )

    @staticmethod
    def _free_slug(s: Session, slug: str) -> str:
        candidate, n = slug[:70], 2
        while s.scalar(select(ReceiptRow.id).where(ReceiptRow.slug == candidate)) is not None:
            candidate = f"{slug[:70]}-{n}"
            n += 1
        return candidate

    @staticmethod
    def _upsert_place(s: Session, place: Place, now: datetime, owner: int | None) -> PlaceRow:
        # A user's receipts get the user's own place rows: what their receipt says about a
        # merchant must not fill in (or reveal itself through) the shared place of the demo set.
        key = f"{normalize(place.name)}|{normalize(place.address or place.phone)[:120]}"
        if owner is not None:
            key = f"u{owner}|{key}"[:240]
        row = s.scalar(select(PlaceRow).where(PlaceRow.place_key == key))
        if row is None:
            row = PlaceRow(
                owner_id=owner,
                place_key=key,
                name=place.name,
                address=place.address[:400],
                phone=place.phone[:60],
                website=place.website[:200],
                hours=place.hours[:200],
                source=place.source,
                created_at=now,
            )
            s.add(row)
            s.flush()
        else:
            # A later receipt of the same place may know what an earlier one did not.
            for field in ("phone", "website", "hours"):
                if not getattr(row, field) and getattr(place, field):
                    setattr(row, field, getattr(place, field))
        return row

    # ------------------------------------------------------------------ receipts
    def _receipts(self, s: Session, *where: Any) -> list[Receipt]:
        """Receipts with their line and word counts in one query, however many there are."""
        line_counts = (
            select(LineRow.receipt_pk, func.count().label("n"))
            .group_by(LineRow.receipt_pk)
            .subquery()
        )
        word_counts = (
            select(WordRow.receipt_pk, func.count().label("n"))
            .group_by(WordRow.receipt_pk)
            .subquery()
        )
        q = (
            select(ReceiptRow, line_counts.c.n, word_counts.c.n)
            .outerjoin(line_counts, line_counts.c.receipt_pk == ReceiptRow.id)
            .outerjoin(word_counts, word_counts.c.receipt_pk == ReceiptRow.id)
            .where(*where, *self._visible())
            .order_by(ReceiptRow.id)
        )
        return [
            Receipt(
                id=row.id,
                image_id=row.image_id,
                receipt_id=row.receipt_id,
                slug=row.slug,
                merchant_name=row.merchant_name,
                source=row.source,
                place_id=row.place_id,
                line_count=lines or 0,
                word_count=words or 0,
                imported_at=row.imported_at,
            )
            for row, lines, words in s.execute(q)
        ]

    def _receipt(self, s: Session, row: ReceiptRow) -> Receipt:
        return self._receipts(s, ReceiptRow.id == row.id)[0]

    def list_receipts(self, merchant: str | None = None) -> list[Receipt]:
        where = [func.lower(ReceiptRow.merchant_name) == merchant.lower()] if merchant else []
        with session_scope(self.engine) as s:
            return self._receipts(s, *where)

    def version(self) -> tuple[int, int]:
        """(largest receipt id, largest label id): receipts and labels are only ever appended,
        so two reads with the same version see the same receipts, queue and label history."""
        # Asked on every cached API read: plain DB-API, no statement compilation.
        conn = self.engine.raw_connection()
        try:
            cur = conn.cursor()
            cur.execute(_VERSION_SQL)
            # MAX() aggregates always return exactly one row.
            receipt_pk, label_pk = cast(tuple[Any, Any], cur.fetchone())
            cur.close()
        finally:
            conn.close()
        return receipt_pk or 0, label_pk or 0

    def merchants(self) -> list[str]:
        with session_scope(self.engine) as s:
            return sorted(set(s.scalars(select(ReceiptRow.merchant_name).where(*self._visible()))))

    def get_receipt(self, receipt_pk: int) -> Receipt:
        with session_scope(self.engine) as s:
            row = s.scalar(select(ReceiptRow).where(ReceiptRow.id == receipt_pk, *self._visible()))
            if row is None:
                raise NotFoundError(f"No receipt with id {receipt_pk}.")
            return self._receipt(s, row)

    def get_receipt_by_key(self, image_id: str, receipt_id: int) -> Receipt:
        with session_scope(self.engine) as s:
            row = s.scalar(
                select(ReceiptRow).where(
                    ReceiptRow.image_id == image_id,
                    ReceiptRow.receipt_id == receipt_id,
                    *self._visible(),
                )
            )
            if row is None:
                raise NotFoundError(
                    f"No receipt {image_id}#{receipt_id}; see `casework receipts list`."
                )
            return self._receipt(s, row)

    def resolve_receipt(self, ref: str) -> Receipt:
        """A receipt by slug, ``image_id#n`` key, image id or a unique image-id prefix."""
        ref = ref.strip()
        if not ref:
            raise InputError("Name a receipt by its slug or key; see `casework receipts list`.")
        with session_scope(self.engine) as s:
            visible = self._visible()
            row = s.scalar(select(ReceiptRow).where(ReceiptRow.slug == ref.lower(), *visible))
            if row is None and "#" in ref:
                image_id, _, n = ref.rpartition("#")
                if n.isdigit():
                    row = s.scalar(
                        select(ReceiptRow).where(
                            ReceiptRow.image_id == image_id,
                            ReceiptRow.receipt_id == int(n),
                            *visible,
                        )
                    )
            if row is None and re.fullmatch(r"[A-Za-z0-9_\-.]{4,80}", ref):
                rows = list(
                    s.scalars(
                        select(ReceiptRow)
                        .where(ReceiptRow.image_id.startswith(ref), *visible)
                        .limit(3)
                    )
                )
                if len(rows) > 1:
                    raise InputError(f"Receipt {ref!r} is ambiguous; use its slug or full key.")
                row = rows[0] if rows else None
            if row is None:
                raise NotFoundError(f"No receipt {ref!r}; see `casework receipts list`.")
            return self._receipt(s, row)

    def lines(self, receipt_pk: int) -> list[Line]:
        with session_scope(self.engine) as s:
            rows = s.scalars(
                select(LineRow)
                .where(LineRow.receipt_pk == receipt_pk, *self._through_receipt(LineRow.receipt_pk))
                .order_by(LineRow.line_id)
            )
            return [
                Line(line_id=r.line_id, text=r.text, box=Box(x0=r.x0, y0=r.y0, x1=r.x1, y1=r.y1))
                for r in rows
            ]

    @staticmethod
    def _word(r: WordRow) -> Word:
        return Word(
            id=r.id,
            receipt_pk=r.receipt_pk,
            line_id=r.line_id,
            word_id=r.word_id,
            token_index=r.token_index,
            text=r.text,
            box=Box(x0=r.x0, y0=r.y0, x1=r.x1, y1=r.y1),
        )

    def words(self, receipt_pk: int) -> list[Word]:
        with session_scope(self.engine) as s:
            rows = s.scalars(
                select(WordRow)
                .where(WordRow.receipt_pk == receipt_pk, *self._through_receipt(WordRow.receipt_pk))
                .order_by(WordRow.line_id, WordRow.word_id)
            )
            return [self._word(r) for r in rows]

    def get_word(self, receipt_pk: int, line_id: int, word_id: int) -> Word:
        with session_scope(self.engine) as s:
            row = s.scalar(
                select(WordRow).where(
                    WordRow.receipt_pk == receipt_pk,
                    WordRow.line_id == line_id,
                    WordRow.word_id == word_id,
                    *self._through_receipt(WordRow.receipt_pk),
                )
            )
            if row is None:
                slug = s.scalar(
                    select(ReceiptRow.slug).where(ReceiptRow.id == receipt_pk, *self._visible())
                )
                if slug is None:
                    raise NotFoundError(f"No receipt with id {receipt_pk}.")
                raise NotFoundError(
                    f"Receipt {slug} has no word {word_id} on line {line_id}; see `casework receipts show {slug}`."
                )
            return self._word(row)

    def word_by_pk(self, word_pk: int) -> Word:
        with session_scope(self.engine) as s:
            row = s.scalar(
                select(WordRow).where(
                    WordRow.id == word_pk, *self._through_receipt(WordRow.receipt_pk)
                )
            )
            if row is None:
                raise NotFoundError(f"No word with id {word_pk}.")
            return self._word(row)

    # ------------------------------------------------------------------ places
    def place(self, place_id: int) -> Place | None:
        with session_scope(self.engine) as s:
            where = [] if self.tenant is None else [visible_to(PlaceRow.owner_id, self.tenant)]
            row = s.scalar(select(PlaceRow).where(PlaceRow.id == place_id, *where))
            if row is None:
                return None
            return Place(
                id=row.id,
                name=row.name,
                address=row.address,
                phone=row.phone,
                website=row.website,
                hours=row.hours,
                source=row.source,
            )

    # ------------------------------------------------------------------ labels
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
        now = _now()
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

    # ------------------------------------------------------------------ edge cases
    def _require_admin(self) -> None:
        """Edge cases are shared by every tenant: only the operator or an admin edits them."""
        if self.tenant is not None and not self.tenant.has_role(Role.ADMIN):
            raise PermissionDenied(
                f"Edge cases are shared by every user; only an admin edits them "
                f"({self.tenant.name} is a {self.tenant.role})."
            )

    def edge_cases(
        self, label_type: str | None = None, *, include_inactive: bool = False
    ) -> list[EdgeCase]:
        with session_scope(self.engine) as s:
            q = select(EdgeCaseRow).order_by(EdgeCaseRow.id)
            if label_type:
                q = q.where(EdgeCaseRow.label_type == label_type)
            if not include_inactive:
                q = q.where(EdgeCaseRow.active.is_(True))
            return [
                EdgeCase(
                    id=r.id,
                    label_type=r.label_type,
                    pattern=r.pattern,
                    reason=r.reason,
                    merchant_name=r.merchant_name,
                )
                for r in s.scalars(q)
            ]

    def add_edge_case(
        self,
        label_type: str,
        pattern: str,
        reason: str,
        *,
        merchant: str | None = None,
        created_by: str = "cli",
    ) -> EdgeCase:
        self._require_admin()
        try:
            re.compile(pattern)
        except re.error as exc:
            raise InputError(
                f"Pattern {pattern!r} is not a valid regular expression ({exc})."
            ) from exc
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", label_type):
            raise InputError(
                f"Label {label_type!r} is not an upper-case label name such as GRAND_TOTAL."
            )
        with session_scope(self.engine) as s:
            dup = s.scalar(
                select(EdgeCaseRow.id).where(
                    and_(
                        EdgeCaseRow.label_type == label_type,
                        EdgeCaseRow.pattern == pattern,
                        EdgeCaseRow.active.is_(True),
                        EdgeCaseRow.merchant_name.is_(None)
                        if merchant is None
                        else EdgeCaseRow.merchant_name == merchant,
                    )
                )
            )
            if dup is not None:
                raise InputError(f"Edge case {dup} already has this label and pattern.")
            row = EdgeCaseRow(
                label_type=label_type,
                pattern=pattern,
                reason=reason,
                merchant_name=merchant,
                active=True,
                created_by=created_by,
                created_at=_now(),
            )
            s.add(row)
            s.flush()
            return EdgeCase(
                id=row.id,
                label_type=label_type,
                pattern=pattern,
                reason=reason,
                merchant_name=merchant,
            )

    def deactivate_edge_case(self, edge_case_id: int) -> EdgeCase:
        """Edge cases are switched off, not deleted, so past decisions stay explainable."""
        self._require_admin()
        with session_scope(self.engine) as s:
            row = s.get(EdgeCaseRow, edge_case_id)
            if row is None or not row.active:
                raise NotFoundError(
                    f"No active edge case {edge_case_id}; see `casework receipts edge-cases list`."
                )
            row.active = False
            return EdgeCase(
                id=row.id,
                label_type=row.label_type,
                pattern=row.pattern,
                reason=row.reason,
                merchant_name=row.merchant_name,
            )
