"""SQLAlchemy tables of the receipts app (Alembic branch ``receipts``).

Labels are append-only: a change is a new row whose ``replaces_id`` points at the row it
supersedes (unique, so a label is superseded at most once) and whose ``consolidated_from_id``
points at the label whose type it replaces. Current labels are the rows nobody replaced.

Receipts and places carry ``owner_id`` (``TenantScoped``: NULL = shared, read-only to plain
users); lines, words and labels belong to the owner of their receipt.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from casework.runtime.context import TenantScoped
from casework.stores.sql import Base

__all__ = ["EdgeCaseRow", "LabelRow", "LineRow", "PlaceRow", "ReceiptRow", "WordRow"]


class PlaceRow(TenantScoped, Base):
    __tablename__ = "receipts_places"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    place_key: Mapped[str] = mapped_column(String(240), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    address: Mapped[str] = mapped_column(String(400), default="")
    phone: Mapped[str] = mapped_column(String(60), default="")
    website: Mapped[str] = mapped_column(String(200), default="")
    hours: Mapped[str] = mapped_column(String(200), default="")
    source: Mapped[str] = mapped_column(String(20), default="receipt")
    external_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReceiptRow(TenantScoped, Base):
    __tablename__ = "receipts_receipts"
    __table_args__ = (UniqueConstraint("image_id", "receipt_id", name="uq_receipts_receipts_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    image_id: Mapped[str] = mapped_column(String(80))
    receipt_id: Mapped[int] = mapped_column(Integer)
    slug: Mapped[str] = mapped_column(String(80), unique=True)
    merchant_name: Mapped[str] = mapped_column(String(200), index=True)
    source: Mapped[str] = mapped_column(String(400))
    place_id: Mapped[int | None] = mapped_column(ForeignKey("receipts_places.id"), nullable=True)
    width: Mapped[float] = mapped_column(Float, default=0.0)
    height: Mapped[float] = mapped_column(Float, default=0.0)
    extra_json: Mapped[str] = mapped_column(Text, default="{}")
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LineRow(Base):
    __tablename__ = "receipts_lines"
    __table_args__ = (UniqueConstraint("receipt_pk", "line_id", name="uq_receipts_lines_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    receipt_pk: Mapped[int] = mapped_column(
        ForeignKey("receipts_receipts.id", ondelete="CASCADE"), index=True
    )
    line_id: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    x0: Mapped[float] = mapped_column(Float)
    y0: Mapped[float] = mapped_column(Float)
    x1: Mapped[float] = mapped_column(Float)
    y1: Mapped[float] = mapped_column(Float)


class WordRow(Base):
    __tablename__ = "receipts_words"
    __table_args__ = (
        UniqueConstraint("receipt_pk", "line_id", "word_id", name="uq_receipts_words_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    receipt_pk: Mapped[int] = mapped_column(
        ForeignKey("receipts_receipts.id", ondelete="CASCADE"), index=True
    )
    line_id: Mapped[int] = mapped_column(Integer)
    word_id: Mapped[int] = mapped_column(Integer)
    token_index: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(String(400))
    x0: Mapped[float] = mapped_column(Float)
    y0: Mapped[float] = mapped_column(Float)
    x1: Mapped[float] = mapped_column(Float)
    y1: Mapped[float] = mapped_column(Float)


class LabelRow(Base):
    __tablename__ = "receipts_labels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    receipt_pk: Mapped[int] = mapped_column(
        ForeignKey("receipts_receipts.id", ondelete="CASCADE"), index=True
    )
    word_pk: Mapped[int] = mapped_column(
        ForeignKey("receipts_words.id", ondelete="CASCADE"), index=True
    )
    label_type: Mapped[str] = mapped_column(String(40), index=True)
    status: Mapped[str] = mapped_column(String(20), index=True)
    reasoning: Mapped[str] = mapped_column(Text, default="")
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    proposed_by: Mapped[str] = mapped_column(String(120))
    validated_by: Mapped[str | None] = mapped_column(String(120), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    validated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    replaces_id: Mapped[int | None] = mapped_column(
        ForeignKey("receipts_labels.id"), nullable=True, unique=True
    )
    consolidated_from_id: Mapped[int | None] = mapped_column(
        ForeignKey("receipts_labels.id"), nullable=True, index=True
    )


class EdgeCaseRow(Base):
    __tablename__ = "receipts_edge_cases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    label_type: Mapped[str] = mapped_column(String(40), index=True)
    pattern: Mapped[str] = mapped_column(String(300))
    reason: Mapped[str] = mapped_column(String(400))
    merchant_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_by: Mapped[str] = mapped_column(String(120), default="seed")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
