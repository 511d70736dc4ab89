"""Cases: one per vanpool under audit; every change appends to the audit log in the same
transaction, so the log and the state never disagree."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.apps.vanpool.models import (
    CaseStatus,
    CaseView,
    new_id,
)
from casework.apps.vanpool.repository.audit import AuditStore
from casework.apps.vanpool.tables import (
    CaseRow,
    ThreadRow,
    VanpoolRow,
)
from casework.errors import NotFoundError

OPEN_STATUSES = tuple(s.value for s in CaseStatus if s is not CaseStatus.CLOSED)


class CaseStore(AuditStore):
    """Cases, their status and when they are next due."""

    def _case_view(self, s: Session, row: CaseRow) -> CaseView:
        vanpool_id = s.scalar(select(VanpoolRow.vanpool_id).where(VanpoolRow.id == row.vanpool_pk))
        thread_id = s.scalar(
            select(ThreadRow.thread_id).where(ThreadRow.case_pk == row.id).order_by(ThreadRow.id)
        )
        return CaseView(
            case_id=row.case_id,
            vanpool_id=vanpool_id or "",
            status=row.status,
            meta=json.loads(row.meta or "{}"),
            outcome=row.outcome,
            created_at=row.created_at,
            updated_at=row.updated_at,
            resolved_at=row.resolved_at,
            due_at=row.due_at,
            thread_id=thread_id,
        )

    def get_case(self, case_id: str) -> CaseView:
        with self.session() as s:
            row = s.scalar(select(CaseRow).where(CaseRow.case_id == case_id))
            if row is None:
                raise NotFoundError(
                    f"Case {case_id} does not exist; `casework vanpool cases` lists them."
                )
            return self._case_view(s, row)

    def open_case_for(self, vanpool_id: str) -> CaseView | None:
        """The vanpool's open case (one case per vanpool), if any."""
        with self.session() as s:
            row = s.scalar(
                select(CaseRow)
                .join(VanpoolRow, VanpoolRow.id == CaseRow.vanpool_pk)
                .where(VanpoolRow.vanpool_id == vanpool_id, CaseRow.status.in_(OPEN_STATUSES))
                .order_by(CaseRow.id.desc())
            )
            return self._case_view(s, row) if row else None

    def list_cases(self, status: str | None = None) -> list[CaseView]:
        with self.session() as s:
            q = select(CaseRow).order_by(CaseRow.id)
            if status:
                q = q.where(CaseRow.status == status)
            return [self._case_view(s, r) for r in s.scalars(q)]

    def create_case(
        self, vanpool_id: str, meta: dict[str, Any], now: datetime, actor: str
    ) -> CaseView:
        with self.session() as s:
            vp_pk = s.scalar(select(VanpoolRow.id).where(VanpoolRow.vanpool_id == vanpool_id))
            if vp_pk is None:
                raise NotFoundError(f"Vanpool {vanpool_id} does not exist.")
            row = CaseRow(
                case_id=new_id("CASE"),
                vanpool_pk=vp_pk,
                status=CaseStatus.OPEN.value,
                meta=json.dumps(meta),
                created_at=now,
                updated_at=now,
            )
            s.add(row)
            s.flush()
            self._audit(s, now, actor, "case_opened", row.case_id, vanpool_id, meta)
            return self._case_view(s, row)

    def update_case(
        self,
        case_id: str,
        now: datetime,
        actor: str,
        *,
        status: str | None = None,
        meta: dict[str, Any] | None = None,
        outcome: str | None = None,
        due_at: datetime | None = None,
        clear_due: bool = False,
        action: str = "case_updated",
    ) -> CaseView:
        with self.session() as s:
            row = s.scalar(select(CaseRow).where(CaseRow.case_id == case_id))
            if row is None:
                raise NotFoundError(f"Case {case_id} does not exist.")
            detail: dict[str, Any] = {"from": row.status}
            if status:
                row.status = status
                detail["to"] = status
            if meta is not None:
                merged = {**json.loads(row.meta or "{}"), **meta, "updated_by": actor}
                row.meta = json.dumps(merged)
                detail["meta"] = meta
            if outcome:
                row.outcome = outcome
                row.resolved_at = now
                detail["outcome"] = outcome
            if due_at is not None:
                row.due_at = due_at
            if clear_due:
                row.due_at = None
            row.updated_at = now
            view = self._case_view(s, row)
            self._audit(s, now, actor, action, case_id, view.vanpool_id, detail)
            return view

    def due_cases(self, now: datetime) -> list[CaseView]:
        """Cases waiting for a reply whose timeout has passed."""
        with self.session() as s:
            rows = s.scalars(
                select(CaseRow)
                .where(CaseRow.status == CaseStatus.PENDING_REPLY.value, CaseRow.due_at <= now)
                .order_by(CaseRow.id)
            )
            return [self._case_view(s, r) for r in rows]
