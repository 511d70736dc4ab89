"""Extraction runs and their recorded events (read back for the stream and the review)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    func,
    select,
    update,
)

from casework.apps.documents.repository.documents import DocumentStore, utc_now
from casework.apps.documents.tables import (
    ExtractionRow,
    RunEventRow,
    RunRow,
)
from casework.errors import NotFoundError
from casework.runtime.decision import ToolCallRecord
from casework.stores.sql import session_scope


class RunStore(DocumentStore):
    """Runs, their events and the tool calls the events record."""

    def create_run(
        self,
        user_id: int,
        run_id: str,
        kind: str,
        *,
        extraction_id: int | None = None,
        stack_id: int | None = None,
    ) -> None:
        with session_scope(self.engine) as s:
            s.add(
                RunRow(
                    id=run_id,
                    owner_id=user_id,
                    kind=kind,
                    extraction_id=extraction_id,
                    stack_id=stack_id,
                    status="running",
                    created_at=utc_now(),
                )
            )

    def append_event(self, run_id: str, seq: int, data: dict[str, Any]) -> None:
        with session_scope(self.engine) as s:
            s.add(RunEventRow(run_id=run_id, seq=seq, data=data))

    def finish_run(self, run_id: str, cost_usd: float) -> None:
        with session_scope(self.engine) as s:
            s.execute(
                update(RunRow)
                .where(RunRow.id == run_id)
                .values(status="done", cost_usd=cost_usd, finished_at=utc_now())
            )

    def stale_runs(self, older_than: datetime) -> list[tuple[str, int, int | None, int]]:
        """Runs still ``running`` whose last sign of life is before ``older_than``: their
        process ended (killed, crashed). (run id, owner, extraction id, last event seq)."""
        with session_scope(self.engine) as s:
            rows = s.execute(
                select(RunRow.id, RunRow.owner_id, RunRow.extraction_id, RunRow.created_at).where(
                    RunRow.status == "running", RunRow.created_at < older_than
                )
            ).all()
            out = []
            for run_id, owner, ext_id, _created in rows:
                last = s.scalar(
                    select(func.max(RunEventRow.seq)).where(RunEventRow.run_id == run_id)
                )
                out.append((run_id, owner or 0, ext_id, last or 0))
            return out

    def stale_extractions(self, older_than: datetime) -> list[tuple[int, int]]:
        """(owner, extraction id) of extractions ``in_progress`` untouched since ``older_than``."""
        with session_scope(self.engine) as s:
            rows = s.execute(
                select(ExtractionRow.owner_id, ExtractionRow.id).where(
                    ExtractionRow.status == "in_progress", ExtractionRow.updated_at < older_than
                )
            ).all()
            return [(r[0] or 0, r[1]) for r in rows]

    def get_run(self, user_id: int, run_id: str) -> dict[str, Any]:
        with session_scope(self.engine) as s:
            row = s.scalars(
                select(RunRow).where(RunRow.id == run_id, RunRow.owner_id == user_id)
            ).one_or_none()
            if row is None:
                raise NotFoundError(f"No run {run_id!r}; runs are named when an extraction starts.")
            return {
                "id": row.id,
                "kind": row.kind,
                "extraction_id": row.extraction_id,
                "stack_id": row.stack_id,
                "status": row.status,
                "cost_usd": row.cost_usd,
            }

    def events_after(
        self, user_id: int, run_id: str, after: int
    ) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
        """(events with seq > after, whether the run is done), scoped to the user's run."""
        with session_scope(self.engine) as s:
            status = s.scalar(
                select(RunRow.status).where(RunRow.id == run_id, RunRow.owner_id == user_id)
            )
            if status is None:
                raise NotFoundError(f"No run {run_id!r}; runs are named when an extraction starts.")
            rows = s.execute(
                select(RunEventRow.seq, RunEventRow.data)
                .where(RunEventRow.run_id == run_id, RunEventRow.seq > after)
                .order_by(RunEventRow.seq)
            ).all()
            return [(r[0], r[1]) for r in rows], status == "done"

    def extraction_tool_calls(self, user_id: int, extraction_id: int) -> list[ToolCallRecord]:
        """The tool calls of the runs that wrote an extraction, from their recorded events
        (the spec's flat events carry a call's input, not its output)."""
        q = (
            select(RunEventRow.run_id, RunEventRow.seq, RunEventRow.data)
            .join(RunRow, RunRow.id == RunEventRow.run_id)
            .where(RunRow.extraction_id == extraction_id, RunRow.owner_id == user_id)
            .order_by(RunRow.created_at, RunEventRow.seq)
        )
        with session_scope(self.engine) as s:
            rows = s.execute(q).all()
        return [
            ToolCallRecord(
                name=str(data["tool"]),
                args=data["input"]
                if isinstance(data.get("input"), dict)
                else {"input": data.get("input")},
                id=f"{run_id}:{seq}",
            )
            for run_id, seq, data in rows
            if isinstance(data, dict) and "tool" in data
        ]
