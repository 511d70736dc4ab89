"""Edge cases: shared by every tenant, edited only by the operator or an admin."""

from __future__ import annotations

import re

from sqlalchemy import and_, select

from casework.apps.receipts.models import (
    EdgeCase,
)
from casework.apps.receipts.repository.tenancy import TenantScope, utc_now
from casework.apps.receipts.tables import (
    EdgeCaseRow,
)
from casework.errors import InputError, NotFoundError
from casework.runtime.context import (
    PermissionDenied,
    Role,
)
from casework.stores.sql import session_scope


class EdgeCaseStore(TenantScope):
    """The edge cases the rules consult."""

    def _require_admin(self) -> None:
        """Edge cases are shared by every tenant: only the operator or an admin edits them."""
        if self.tenant is not None and not self.tenant.has_role(Role.ADMIN):
            raise PermissionDenied(
                f"Edge cases are shared by every user; only an admin edits them "
                f"({self.tenant.name} is a {self.tenant.role})."
            )

    def edge_cases(
        self, label_type: str | None = None, *, include_inactive: bool = False
    ) -> list[EdgeCase]:
        with session_scope(self.engine) as s:
            q = select(EdgeCaseRow).order_by(EdgeCaseRow.id)
            if label_type:
                q = q.where(EdgeCaseRow.label_type == label_type)
            if not include_inactive:
                q = q.where(EdgeCaseRow.active.is_(True))
            return [
                EdgeCase(
                    id=r.id,
                    label_type=r.label_type,
                    pattern=r.pattern,
                    reason=r.reason,
                    merchant_name=r.merchant_name,
                )
                for r in s.scalars(q)
            ]

    def add_edge_case(
        self,
        label_type: str,
        pattern: str,
        reason: str,
        *,
        merchant: str | None = None,
        created_by: str = "cli",
    ) -> EdgeCase:
        self._require_admin()
        try:
            re.compile(pattern)
        except re.error as exc:
            raise InputError(
                f"Pattern {pattern!r} is not a valid regular expression ({exc})."
            ) from exc
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", label_type):
            raise InputError(
                f"Label {label_type!r} is not an upper-case label name such as GRAND_TOTAL."
            )
        with session_scope(self.engine) as s:
            dup = s.scalar(
                select(EdgeCaseRow.id).where(
                    and_(
                        EdgeCaseRow.label_type == label_type,
                        EdgeCaseRow.pattern == pattern,
                        EdgeCaseRow.active.is_(True),
                        EdgeCaseRow.merchant_name.is_(None)
                        if merchant is None
                        else EdgeCaseRow.merchant_name == merchant,
                    )
                )
            )
            if dup is not None:
                raise InputError(f"Edge case {dup} already has this label and pattern.")
            row = EdgeCaseRow(
                label_type=label_type,
                pattern=pattern,
                reason=reason,
                merchant_name=merchant,
                active=True,
                created_by=created_by,
                created_at=utc_now(),
            )
            s.add(row)
            s.flush()
            return EdgeCase(
                id=row.id,
                label_type=label_type,
                pattern=pattern,
                reason=reason,
                merchant_name=merchant,
            )

    def deactivate_edge_case(self, edge_case_id: int) -> EdgeCase:
        """Edge cases are switched off, not deleted, so past decisions stay explainable."""
        self._require_admin()
        with session_scope(self.engine) as s:
            row = s.get(EdgeCaseRow, edge_case_id)
            if row is None or not row.active:
                raise NotFoundError(
                    f"No active edge case {edge_case_id}; see `casework receipts edge-cases list`."
                )
            row.active = False
            return EdgeCase(
                id=row.id,
                label_type=row.label_type,
                pattern=row.pattern,
                reason=row.reason,
                merchant_name=row.merchant_name,
            )
