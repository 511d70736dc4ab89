"""Approval requests, read from the audit log: which wait for a person, and how each was settled."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.orm import aliased

from casework.apps.vanpool.models import (
    ApprovalRequest,
    ApprovalSettled,
    CaseStatus,
)
from casework.apps.vanpool.repository.transaction import TransactionScope
from casework.apps.vanpool.tables import (
    AuditRow,
    CaseRow,
    MessageRow,
)
from casework.errors import NotFoundError
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before

APPROVAL_REQUESTED = "approval_requested"
REVIEW_DECISION = "review_decision"
"""The row a person's decision in the review inbox adds to the log (who decided, and why)."""
_WAITING_STATUSES = (CaseStatus.HITL_REVIEW.value, CaseStatus.PRE_CANCEL.value)
_DECISION_ACTIONS = (
    "draft_approved",
    "draft_edited",
    "draft_rejected",
    "case_closed",
    APPROVAL_REQUESTED,
)
"""The rows a decision leaves in the log, first one wins (a cancellation's decision closes the
case; a later request supersedes an earlier one nobody settled)."""


def _approval(detail_json: str) -> dict[str, Any]:
    detail = json.loads(detail_json or "{}")
    approval = (detail.get("meta") or {}).get("approval") or {}
    return approval if isinstance(approval, dict) else {}


def _waiting() -> Any:
    """A request still waits while its case does and no later request replaced it."""
    later = aliased(AuditRow)
    return and_(
        CaseRow.status.in_(_WAITING_STATUSES),
        ~exists().where(
            later.case_id == AuditRow.case_id,
            later.action == APPROVAL_REQUESTED,
            later.id > AuditRow.id,
        ),
    )


class ApprovalStore(TransactionScope):
    """The review inbox's approval requests."""

    def _requests_where(self, waiting: bool, filters: ReviewFilters) -> list[Any]:
        where: list[Any] = [AuditRow.action == APPROVAL_REQUESTED]
        where.append(_waiting() if waiting else ~_waiting())
        return where + age_window(AuditRow.at, filters)

    def approval_requests(
        self, waiting: bool, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ApprovalRequest]:
        """Requests still waiting (or settled), newest first, with their drafts' text."""
        where = self._requests_where(waiting, filters)
        where += keyset_before(AuditRow.at, AuditRow.id, before)
        q = (
            select(AuditRow.id, AuditRow.at, AuditRow.case_id, AuditRow.vanpool_id, AuditRow.detail)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(*where)
            .order_by(AuditRow.at.desc(), AuditRow.id.desc())
            .limit(limit)
        )
        with self.session() as s:
            rows = s.execute(q).all()
            drafts = [_approval(r.detail).get("message_id") for r in rows]
            bodies = dict(
                s.execute(
                    select(MessageRow.message_id, MessageRow.body).where(
                        MessageRow.message_id.in_([d for d in drafts if d])
                    )
                ).all()
            )
        return [
            ApprovalRequest(
                id=r.id,
                at=r.at,
                case_id=r.case_id or "",
                vanpool_id=r.vanpool_id or "",
                approval=_approval(r.detail),
                draft_body=bodies.get(str(_approval(r.detail).get("message_id")), ""),
            )
            for r in rows
        ]

    def count_approval_requests(self, waiting: bool, filters: ReviewFilters) -> int:
        q = (
            select(func.count())
            .select_from(AuditRow)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(*self._requests_where(waiting, filters))
        )
        with self.session() as s:
            return int(s.scalar(q) or 0)

    def approval_request(self, request_id: int) -> ApprovalRequest:
        with self.session() as s:
            row = s.scalar(
                select(AuditRow).where(
                    AuditRow.id == request_id, AuditRow.action == APPROVAL_REQUESTED
                )
            )
            if row is None or not row.case_id:
                raise NotFoundError(f"No vanpool approval {request_id}; open one from the inbox.")
            return ApprovalRequest(
                id=row.id,
                at=row.at,
                case_id=row.case_id,
                vanpool_id=row.vanpool_id or "",
                approval=_approval(row.detail),
            )

    def approval_waiting(self, request_id: int) -> bool:
        q = (
            select(func.count())
            .select_from(AuditRow)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(AuditRow.id == request_id, _waiting())
        )
        with self.session() as s:
            return bool(s.scalar(q))

    def approval_settled(self, request: ApprovalRequest) -> ApprovalSettled | None:
        """How the request was settled (the first decision row after it) and by whom (the
        first reviewer's row, else that decision row's actor); None while nothing settled it."""
        later = (AuditRow.case_id == request.case_id, AuditRow.id > request.id)
        with self.session() as s:
            row = s.scalar(
                select(AuditRow)
                .where(*later, AuditRow.action.in_(_DECISION_ACTIONS))
                .order_by(AuditRow.id)
                .limit(1)
            )
            if row is None:
                return None
            reviewer = s.scalar(
                select(AuditRow)
                .where(*later, AuditRow.action == REVIEW_DECISION)
                .order_by(AuditRow.id)
                .limit(1)
            )
            by = reviewer if reviewer is not None and row.action != APPROVAL_REQUESTED else row
            return ApprovalSettled(
                action=row.action,
                detail=json.loads(row.detail or "{}"),
                decided_by=by.actor,
                decided_at=by.at,
            )
