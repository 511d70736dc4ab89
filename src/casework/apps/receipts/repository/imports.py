"""Importing parsed receipts: receipts, lines, words, first labels and places in one transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from casework.apps.receipts.importer import ParsedReceipt
from casework.apps.receipts.models import (
    Place,
    Receipt,
    ValidationStatus,
)
from casework.apps.receipts.repository.receipts import ReceiptReads
from casework.apps.receipts.repository.tenancy import utc_now
from casework.apps.receipts.rules import normalize
from casework.apps.receipts.tables import (
    LabelRow,
    LineRow,
    PlaceRow,
    ReceiptRow,
    WordRow,
)
from casework.runtime.context import (
    owner_for,
)
from casework.stores.sql import session_scope


class ReceiptImports(ReceiptReads):
    """Writes a batch of parsed receipts."""

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
        now = utc_now()
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
