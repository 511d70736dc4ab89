"""SQLAlchemy tables of the vanpool app (Alembic branch ``vanpool``).

Riders are never deleted: a cancelled membership keeps its row with ``removed_at`` set, so a
roster is the riders without it. The audit log is append-only (the migration adds triggers
that refuse UPDATE and DELETE on it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from casework.stores.sql import Base

__all__ = [
    "AuditRow",
    "CaseRow",
    "EmployeeRow",
    "MessageRow",
    "RiderRow",
    "ShiftRow",
    "ThreadRow",
    "VanpoolRow",
]


class UtcDateTime(TypeDecorator[datetime]):
    """Timestamps stored in UTC and read back timezone-aware (SQLite drops the offset)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        return value.astimezone(UTC) if value is not None and value.tzinfo else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class ShiftRow(Base):
    __tablename__ = "vanpool_shifts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    shift_id: Mapped[str] = mapped_column(String(40), unique=True)
    name: Mapped[str] = mapped_column(String(120))
    spec: Mapped[str] = mapped_column(String(400))
    """Days and 24-hour segments, rotating weeks joined by ``|`` (see ``rules.parse_shift``)."""
    timezone: Mapped[str] = mapped_column(String(60))


class EmployeeRow(Base):
    __tablename__ = "vanpool_employees"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    employee_id: Mapped[str] = mapped_column(String(20), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(200))
    home_zip: Mapped[str] = mapped_column(String(10))
    home_lat: Mapped[float] = mapped_column(Float)
    home_lng: Mapped[float] = mapped_column(Float)
    site: Mapped[str] = mapped_column(String(120))
    shift_pk: Mapped[int | None] = mapped_column(
        ForeignKey("vanpool_shifts.id"), index=True, nullable=True
    )
    """NULL for an employee who rides no vanpool and whose export left the shift blank."""
    pto: Mapped[str] = mapped_column(String(400), default="")
    """PTO ranges, ``YYYY-MM-DD..YYYY-MM-DD`` joined by ``;``."""
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)


class VanpoolRow(Base):
    __tablename__ = "vanpool_vanpools"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    vanpool_id: Mapped[str] = mapped_column(String(20), unique=True)
    work_site: Mapped[str] = mapped_column(String(120))
    pickup_zip: Mapped[str] = mapped_column(String(10))
    pickup_lat: Mapped[float] = mapped_column(Float)
    pickup_lng: Mapped[float] = mapped_column(Float)
    departure_time: Mapped[str] = mapped_column(String(5))
    return_time: Mapped[str] = mapped_column(String(5))
    timezone: Mapped[str] = mapped_column(String(60))
    max_commute_miles: Mapped[float] = mapped_column(Float)


class RiderRow(Base):
    __tablename__ = "vanpool_riders"
    __table_args__ = (
        UniqueConstraint("vanpool_pk", "employee_pk", name="uq_vanpool_riders_member"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    vanpool_pk: Mapped[int] = mapped_column(ForeignKey("vanpool_vanpools.id"), index=True)
    employee_pk: Mapped[int] = mapped_column(ForeignKey("vanpool_employees.id"), index=True)
    joined_at: Mapped[datetime] = mapped_column(UtcDateTime)
    removed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


class CaseRow(Base):
    __tablename__ = "vanpool_cases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    case_id: Mapped[str] = mapped_column(String(20), unique=True)
    vanpool_pk: Mapped[int] = mapped_column(ForeignKey("vanpool_vanpools.id"), index=True)
    status: Mapped[str] = mapped_column(String(20), index=True)
    meta: Mapped[str] = mapped_column(Text, default="{}")
    """JSON: reason, details, failed_checks, failed_employees, opened_by, updated_by, reaudits."""
    outcome: Mapped[str | None] = mapped_column(String(20), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime)
    due_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    """When the case times out waiting for a reply (outreach + 1 week)."""


class ThreadRow(Base):
    __tablename__ = "vanpool_email_threads"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    thread_id: Mapped[str] = mapped_column(String(20), unique=True)
    case_pk: Mapped[int] = mapped_column(ForeignKey("vanpool_cases.id"), index=True)
    subject: Mapped[str] = mapped_column(String(300))
    recipients: Mapped[str] = mapped_column(Text)
    """JSON list of addresses."""
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)


class MessageRow(Base):
    __tablename__ = "vanpool_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    message_id: Mapped[str] = mapped_column(String(20), unique=True)
    thread_pk: Mapped[int] = mapped_column(ForeignKey("vanpool_email_threads.id"), index=True)
    direction: Mapped[str] = mapped_column(String(10))
    """``outbound`` or ``inbound``."""
    status: Mapped[str] = mapped_column(String(20), index=True)
    """outbound: draft, queued, sent, rejected; inbound: received, handled."""
    sender: Mapped[str] = mapped_column(String(200))
    recipients: Mapped[str] = mapped_column(Text)
    subject: Mapped[str] = mapped_column(String(300))
    headers: Mapped[str] = mapped_column(Text, default="{}")
    body: Mapped[str] = mapped_column(Text)
    bucket: Mapped[str | None] = mapped_column(String(20), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


class AuditRow(Base):
    __tablename__ = "vanpool_audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    actor: Mapped[str] = mapped_column(String(80))
    """What acted: the rules auditor, an agent, a reviewer's decision."""
    caller: Mapped[str | None] = mapped_column(String(120), nullable=True)
    """Who caused it: the signed-in user's name, or ``cli:<os user>`` for the local operator;
    None on rows written before callers were recorded (vanpool_0003)."""
    action: Mapped[str] = mapped_column(String(80))
    case_id: Mapped[str | None] = mapped_column(String(20), nullable=True, index=True)
    vanpool_id: Mapped[str | None] = mapped_column(String(20), nullable=True, index=True)
    detail: Mapped[str] = mapped_column(Text, default="{}")
