"""Receipts, lines, words and places: the reads."""

from __future__ import annotations

import re
from typing import Any, cast

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from casework.apps.receipts.models import (
    Box,
    Line,
    Place,
    Receipt,
    Word,
)
from casework.apps.receipts.repository.tenancy import TenantScope
from casework.apps.receipts.tables import (
    LabelRow,
    LineRow,
    PlaceRow,
    ReceiptRow,
    WordRow,
)
from casework.errors import InputError, NotFoundError
from casework.runtime.context import (
    visible_to,
)
from casework.stores.sql import session_scope

_VERSION_SQL = (
    f"SELECT (SELECT max(id) FROM {ReceiptRow.__tablename__}),"
    f" (SELECT max(id) FROM {LabelRow.__tablename__})"
)


class ReceiptReads(TenantScope):
    """Receipts, lines, words and places, as the tenant sees them."""

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
