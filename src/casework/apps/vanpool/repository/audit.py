"""The audit log: one row per change to a case, naming who caused it."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.apps.vanpool.repository.transaction import TransactionScope
from casework.apps.vanpool.tables import (
    AuditRow,
)


class AuditStore(TransactionScope):
    """Appends to and reads the audit log."""

    def _audit(
        self,
        s: Session,
        now: datetime,
        actor: str,
        action: str,
        case_id: str | None,
        vanpool_id: str | None,
        detail: dict[str, Any],
    ) -> None:
        s.add(
            AuditRow(
                at=now,
                actor=actor,
                caller=self.caller,
                action=action,
                case_id=case_id,
                vanpool_id=vanpool_id,
                detail=json.dumps(detail, default=str),
            )
        )

    def audit(
        self,
        now: datetime,
        actor: str,
        action: str,
        *,
        case_id: str | None = None,
        vanpool_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        with self.session() as s:
            self._audit(s, now, actor, action, case_id, vanpool_id, detail or {})

    def audit_log(
        self, case_id: str | None = None, vanpool_id: str | None = None
    ) -> list[dict[str, Any]]:
        with self.session() as s:
            q = select(AuditRow).order_by(AuditRow.id)
            if case_id:
                q = q.where(AuditRow.case_id == case_id)
            if vanpool_id:
                q = q.where(AuditRow.vanpool_id == vanpool_id)
            return [
                {
                    "at": r.at,
                    "actor": r.actor,
                    "caller": r.caller,
                    "action": r.action,
                    "case_id": r.case_id,
                    "vanpool_id": r.vanpool_id,
                    "detail": json.loads(r.detail),
                }
                for r in s.scalars(q)
            ]
