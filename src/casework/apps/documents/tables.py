"""SQLAlchemy tables of the documents app (Alembic branch ``documents``).

Every row belongs to one user (``owner_id`` from the platform's ``TenantScoped``; never null
here: documents are private, nothing is shared). ``extractions.fields`` and
``confidence_scores`` are JSON (JSONB on PostgreSQL, where the spec's SQL functions edit them
with ``jsonb_set``). ``documents_run_events`` keeps every streamed event of a run, so a client
that disconnects re-attaches with ``Last-Event-ID`` and misses nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from casework.runtime.context import TenantScoped
from casework.stores.sql import Base

__all__ = [
    "DocumentRow",
    "ExtractionRow",
    "OcrResultRow",
    "RunEventRow",
    "RunRow",
    "StackDocumentRow",
    "StackRow",
    "StackTableRow",
    "StackTableRowRow",
]

JSONType = JSON().with_variant(JSONB(), "postgresql")


class DocumentRow(TenantScoped, Base):
    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    filename: Mapped[str] = mapped_column(String(300))
    media_type: Mapped[str] = mapped_column(String(60))
    size_bytes: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class OcrResultRow(TenantScoped, Base):
    __tablename__ = "documents_ocr_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), unique=True
    )
    raw_text: Mapped[str] = mapped_column(Text)
    page_count: Mapped[int] = mapped_column(Integer)
    pages: Mapped[list[str]] = mapped_column(JSONType)
    """Text per page, in order."""
    engine: Mapped[str] = mapped_column(String(80))
    """``pypdf`` (text layer), ``rapidocr`` or ``pypdf+rapidocr`` (some pages scanned)."""
    ocr_pages: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ExtractionRow(TenantScoped, Base):
    __tablename__ = "documents_extractions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(20))
    """``in_progress``, ``completed`` or ``failed`` (ours: the spec has no failed state)."""
    reason: Mapped[str] = mapped_column(Text, default="")
    """Why it failed, or how it was completed when the model did not complete it itself."""
    mode: Mapped[str] = mapped_column(String(10), default="auto")
    requested_fields: Mapped[list[str] | None] = mapped_column(JSONType, nullable=True)
    """Custom mode: exactly these field names (the user's schema)."""
    document_type: Mapped[str | None] = mapped_column(String(80), nullable=True)
    fields: Mapped[dict[str, Any]] = mapped_column(JSONType)
    confidence_scores: Mapped[dict[str, Any]] = mapped_column(JSONType)
    method: Mapped[str] = mapped_column(String(20), default="agent")
    """``agent``, ``rules`` or ``rules_fallback`` (the agent failed, the rules filled in)."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RunRow(TenantScoped, Base):
    """One agent run (extraction, correction or stack build) and its event log's state."""

    __tablename__ = "documents_runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    extraction_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    stack_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(20))
    """``running`` or ``done``."""
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class RunEventRow(Base):
    __tablename__ = "documents_run_events"
    __table_args__ = (UniqueConstraint("run_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(
        ForeignKey("documents_runs.id", ondelete="CASCADE"), index=True
    )
    seq: Mapped[int] = mapped_column(Integer)
    data: Mapped[dict[str, Any]] = mapped_column(JSONType)


class StackRow(TenantScoped, Base):
    __tablename__ = "documents_stacks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class StackDocumentRow(Base):
    __tablename__ = "documents_stack_documents"
    __table_args__ = (UniqueConstraint("stack_id", "document_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stack_id: Mapped[int] = mapped_column(
        ForeignKey("documents_stacks.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))


class StackTableRow(Base):
    __tablename__ = "documents_stack_tables"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stack_id: Mapped[int] = mapped_column(
        ForeignKey("documents_stacks.id", ondelete="CASCADE"), unique=True
    )
    columns: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    """``[{"name", "type", "description"}]`` as ``define_columns`` set them."""
    status: Mapped[str] = mapped_column(String(20))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class StackTableRowRow(Base):
    """One row of a stack's table: exactly one per document (the row tracks its document)."""

    __tablename__ = "documents_stack_table_rows"
    __table_args__ = (UniqueConstraint("table_id", "document_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(
        ForeignKey("documents_stack_tables.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    cells: Mapped[dict[str, Any]] = mapped_column(JSONType)
    confidences: Mapped[dict[str, Any]] = mapped_column(JSONType)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
