"""SQLAlchemy tables of the sql app (Alembic branch ``sql``).

Loaded schemas are stored whole (the original's JSON document) with the database they
describe, so `sql schema show` and `sql ask` find them again; the newest one is the default.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casework.stores.sql import Base

__all__ = ["SchemaRow"]


class SchemaRow(Base):
    __tablename__ = "sql_schemas"

    name: Mapped[str] = mapped_column(String(120), primary_key=True)
    source: Mapped[str] = mapped_column(String(1000), default="")
    document: Mapped[str] = mapped_column(Text)
    """The schema in the original's JSON format."""
    db_url: Mapped[str | None] = mapped_column(String(1000), nullable=True)
    """The database the questions run on (set by `sql db create` or `sql schema reflect`)."""
    loaded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
