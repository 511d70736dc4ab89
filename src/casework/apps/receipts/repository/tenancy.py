"""The tenant a receipts repository is bound to, and the WHERE clauses that scope it.

Every read sees the tenant's own receipts plus the shared ones (owner NULL); lines, words,
labels and places are reached only through a visible receipt. The tenant ``None`` is the
local operator: everything, unscoped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Engine, or_, select
from sqlalchemy.orm import Session

from casework.apps.receipts.tables import (
    ReceiptRow,
)
from casework.runtime.context import (
    Caller,
    PermissionDenied,
    Role,
    visible_to,
    writable_by,
)
from casework.stores.sql import session_scope


def utc_now() -> datetime:
    return datetime.now(UTC)


class TenantScope:
    """The engine and the tenant; the clauses every query of the repository is scoped by."""

    def __init__(self, engine: Engine, tenant: Caller | None = None) -> None:
        self.engine = engine
        self.tenant = tenant

    # ------------------------------------------------------------------ tenancy
    def _visible(self) -> list[ColumnElement[bool]]:
        """WHERE clauses on ReceiptRow: the tenant's receipts and the shared ones."""
        return [] if self.tenant is None else [visible_to(ReceiptRow.owner_id, self.tenant)]

    def _through_receipt(self, receipt_pk: Any) -> list[ColumnElement[bool]]:
        """WHERE clauses for rows that belong to the owner of their receipt (lines, words, labels)."""
        if self.tenant is None:
            return []
        return [receipt_pk.in_(select(ReceiptRow.id).where(*self._visible()))]

    def _writable(self) -> ColumnElement[bool]:
        """WHERE clause on ReceiptRow for label changes: own receipts; shared ones for reviewers."""
        own = writable_by(ReceiptRow.owner_id, self.tenant)
        if self.tenant is not None and self.tenant.has_role(Role.REVIEWER):
            return or_(own, ReceiptRow.owner_id.is_(None))
        return own

    def _require_writable(self, s: Session, receipt_pk: int) -> None:
        if self.tenant is None:
            return
        ok = s.scalar(select(ReceiptRow.id).where(ReceiptRow.id == receipt_pk, self._writable()))
        if ok is None:
            slug = s.scalar(select(ReceiptRow.slug).where(ReceiptRow.id == receipt_pk))
            raise PermissionDenied(
                f"Receipt {slug} is shared and read-only to you: only a reviewer or an admin "
                "changes its labels."
            )

    def require_writable(self, receipt_pk: int) -> None:
        """Raise PermissionDenied unless the tenant may change labels of this (visible) receipt."""
        with session_scope(self.engine) as s:
            self._require_writable(s, receipt_pk)
