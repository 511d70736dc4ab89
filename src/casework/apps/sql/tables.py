"""SQLAlchemy tables of the sql app (Alembic branch ``sql``).

Loaded schemas are stored whole (the original's JSON document) with the database they
describe, so `sql schema show` and `sql ask` find them again; the newest one is the default.
An answer nobody was sure of (NEEDS_REVIEW) is kept with its draft query until a person
settles it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casework.stores.sql import Base

__all__ = ["AnswerRow", "SchemaRow"]


class SchemaRow(Base):
    __tablename__ = "sql_schemas"

    name: Mapped[str] = mapped_column(String(120), primary_key=True)
    source: Mapped[str] = mapped_column(String(1000), default="")
    document: Mapped[str] = mapped_column(Text)
    """The schema in the original's JSON format."""
    db_url: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    """The database the questions run on (set by `sql db create` or `sql schema reflect`)."""
    loaded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AnswerRow(Base):
    __tablename__ = "sql_answers"
    __table_args__ = (Index("ix_sql_answers_review", "review_status", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question: Mapped[str] = mapped_column(Text)
    schema_name: Mapped[str] = mapped_column(String(120))
    query: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The draft: the query of the last layer that answered, or none."""
    verdict: Mapped[str] = mapped_column(String(20))
    response: Mapped[dict] = mapped_column(JSON)
    """The whole ``SQLQueryResponse`` as the API returns it."""
    asked_by: Mapped[str | None] = mapped_column(String(120), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    review_status: Mapped[str] = mapped_column(String(20))
    """waiting, then decided."""
    review_outcome: Mapped[str | None] = mapped_column(String(20), nullable=True)
    """accepted, corrected or rejected."""
    corrected_query: Mapped[str | None] = mapped_column(Text, nullable=True)
    decided_by: Mapped[str | None] = mapped_column(String(120), nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    review_note: Mapped[str | None] = mapped_column(Text, nullable=True)
