"""SQLAlchemy tables of the hed app (Alembic branch ``hed``).

One row per finished annotation run. Batch rows carry the batch key and the row's id in the
input file, unique together, so a re-run batch skips what it already finished. A run whose
verdict is not VALID waits for a person (``review_status``) until a reviewer accepts, corrects
or rejects it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from casework.stores.sql import Base

__all__ = ["AnnotationRow"]


class AnnotationRow(Base):
    __tablename__ = "hed_annotations"
    __table_args__ = (
        UniqueConstraint("batch_key", "row_id", name="uq_hed_annotations_batch_row"),
        Index("ix_hed_annotations_review", "review_status", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(String(40), index=True)
    batch_key: Mapped[str | None] = mapped_column(String(80), nullable=True)
    row_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    description: Mapped[str] = mapped_column(Text)
    schema_version: Mapped[str] = mapped_column(String(20))
    strategy: Mapped[str] = mapped_column(String(40))
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    annotation: Mapped[str] = mapped_column(Text, default="")
    verdict: Mapped[str] = mapped_column(String(20))
    validation_status: Mapped[str] = mapped_column(String(30))
    is_valid: Mapped[bool] = mapped_column(Boolean)
    is_faithful: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    is_complete: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    validation_attempts: Mapped[int] = mapped_column(Integer)
    total_iterations: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    ended_by: Mapped[str] = mapped_column(String(40))
    result: Mapped[dict] = mapped_column(JSON)
    """The whole decision as ``--json`` prints it."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    review_status: Mapped[str | None] = mapped_column(String(20), nullable=True)
    """None: nothing to review (VALID); "waiting"; "decided"."""
    review_outcome: Mapped[str | None] = mapped_column(String(20), nullable=True)
    """accepted, corrected or rejected."""
    corrected_annotation: Mapped[str | None] = mapped_column(Text, nullable=True)
    decided_by: Mapped[str | None] = mapped_column(String(120), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    review_note: Mapped[str | None] = mapped_column(Text, nullable=True)
