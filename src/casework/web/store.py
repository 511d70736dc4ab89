"""Live runs started from the UI, persisted event by event with sequence numbers.

A page that reloads (or an EventSource that reconnects with ``Last-Event-ID``) asks for the
events after the last number it saw and misses none. ``web_run_items`` links a run to the
review items it produced, so a decision page can show the trajectory behind its item.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Engine, ForeignKey, Integer, String, Text, select, update
from sqlalchemy.orm import Mapped, mapped_column

from casework.config import Settings
from casework.errors import NotFoundError
from casework.stores.sql import Base, as_utc, get_engine, migrate, session_scope

__all__ = [
    "RUNNING",
    "RunRecord",
    "RunStore",
    "StoredEvent",
]

RUNNING = "running"
FINISHED = ("done", "failed", "interrupted")


class WebRunRow(Base):
    __tablename__ = "web_runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    app: Mapped[str] = mapped_column(String(80), index=True)
    title: Mapped[str] = mapped_column(String(400))
    status: Mapped[str] = mapped_column(String(20))
    started_by: Mapped[str] = mapped_column(String(80))
    params_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebRunEventRow(Base):
    __tablename__ = "web_run_events"

    run_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("web_runs.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    type: Mapped[str] = mapped_column(String(40))
    data_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WebRunItemRow(Base):
    __tablename__ = "web_run_items"

    run_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("web_runs.id", ondelete="CASCADE"), primary_key=True
    )
    app: Mapped[str] = mapped_column(String(80), primary_key=True)
    item_id: Mapped[str] = mapped_column(String(200), primary_key=True)


@dataclass(frozen=True)
class RunRecord:
    id: str
    app: str
    title: str
    status: str
    started_by: str
    params: dict[str, Any]
    created_at: datetime
    finished_at: datetime | None

    @property
    def finished(self) -> bool:
        return self.status != RUNNING


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    type: str
    data: dict[str, Any]


def _record(row: WebRunRow) -> RunRecord:
    return RunRecord(
        id=row.id,
        app=row.app,
        title=row.title,
        status=row.status,
        started_by=row.started_by,
        params=json.loads(row.params_json),
        created_at=as_utc(row.created_at) or row.created_at,
        finished_at=as_utc(row.finished_at),
    )


_migrated: set[str] = set()
_migrate_lock = threading.Lock()


class RunStore:
    """The web tables on the configured database (migrated once per URL per process)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._engine: Engine | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            url = self.settings.db_url
            engine = get_engine(url)
            with _migrate_lock:
                fresh = url not in _migrated
                if fresh:
                    migrate(engine)
                    _migrated.add(url)
            self._engine = engine
            if fresh:  # first use in this process: runs still 'running' belonged to a dead one
                self.mark_interrupted()
        return self._engine

    def create(self, app: str, title: str, started_by: str, params: dict[str, Any]) -> RunRecord:
        row = WebRunRow(
            id=uuid.uuid4().hex[:16],
            app=app,
            title=title[:400],
            status=RUNNING,
            started_by=started_by,
            params_json=json.dumps(params, default=str),
            created_at=datetime.now(UTC),
        )
        with session_scope(self.engine) as s:
            s.add(row)
            s.flush()
            return _record(row)

    def append(self, run_id: str, seq: int, event: dict[str, Any]) -> None:
        with session_scope(self.engine) as s:
            s.add(
                WebRunEventRow(
                    run_id=run_id,
                    seq=seq,
                    type=str(event.get("type", "event"))[:40],
                    data_json=json.dumps(event, default=str),
                    created_at=datetime.now(UTC),
                )
            )

    def finish(self, run_id: str, status: str, items: list[str] | None = None) -> None:
        with session_scope(self.engine) as s:
            row = s.get(WebRunRow, run_id)
            if row is None:
                raise NotFoundError(f"No run {run_id!r}.")
            row.status = status
            row.finished_at = datetime.now(UTC)
            for item_id in dict.fromkeys(items or []):
                s.add(WebRunItemRow(run_id=run_id, app=row.app, item_id=item_id))

    def mark_interrupted(self) -> int:
        """Runs left 'running' by a process that is gone (at start-up, before any new run)."""
        with session_scope(self.engine) as s:
            result = s.execute(
                update(WebRunRow)
                .where(WebRunRow.status == RUNNING)
                .values(status="interrupted", finished_at=datetime.now(UTC))
            )
            return int(result.rowcount or 0)  # type: ignore[attr-defined]

    def get(self, run_id: str) -> RunRecord:
        with session_scope(self.engine) as s:
            row = s.get(WebRunRow, run_id)
            if row is None:
                raise NotFoundError(f"No run {run_id!r}; the runs page lists them.")
            return _record(row)

    def recent(self, limit: int = 50) -> list[RunRecord]:
        with session_scope(self.engine) as s:
            q = select(WebRunRow).order_by(WebRunRow.created_at.desc()).limit(limit)
            return [_record(r) for r in s.scalars(q)]

    def events_after(self, run_id: str, after: int = 0) -> list[StoredEvent]:
        with session_scope(self.engine) as s:
            q = (
                select(WebRunEventRow)
                .where(WebRunEventRow.run_id == run_id, WebRunEventRow.seq > after)
                .order_by(WebRunEventRow.seq)
            )
            return [StoredEvent(r.seq, r.type, json.loads(r.data_json)) for r in s.scalars(q)]

    def runs_for_item(self, app: str, item_id: str) -> list[RunRecord]:
        with session_scope(self.engine) as s:
            q = (
                select(WebRunRow)
                .join(WebRunItemRow, WebRunItemRow.run_id == WebRunRow.id)
                .where(WebRunItemRow.app == app, WebRunItemRow.item_id == item_id)
                .order_by(WebRunRow.created_at)
            )
            return [_record(r) for r in s.scalars(q)]
