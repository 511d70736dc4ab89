"""Who a run is for: the caller (tenant) and how repositories scope rows by it.

The server authenticates a request and hands the handler a ``Caller``; the app puts it into the
run context (``ToolRuntime.context``), so tools and repositories scope by it and the model never
sees or chooses an id. Rows that belong to a user carry ``owner_id`` (``TenantScoped``); a row
with no owner is shared and read-only to users. ``tenant=None`` means the local operator (CLI,
evals): trusted, unscoped.

The runtime knows no HTTP: the FastAPI dependencies that hand a route its caller and settings,
and the permission each route declares, live in ``casework.apikit``.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import ColumnElement, Integer, or_, true
from sqlalchemy.orm import Mapped, QueryableAttribute, mapped_column

from casework.errors import CaseworkError

__all__ = [
    "Caller",
    "PermissionDenied",
    "Role",
    "RunContext",
    "Tenant",
    "TenantScoped",
    "caller_name",
    "owner_for",
    "visible_to",
    "writable_by",
]


class Role(StrEnum):
    """What a user may do; each role includes the ones before it."""

    USER = "user"
    REVIEWER = "reviewer"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return list(Role).index(self)


@dataclass(frozen=True)
class Caller:
    """The authenticated user a request (and the runs it starts) acts for."""

    user_id: int
    name: str
    role: Role

    def has_role(self, role: Role | str) -> bool:
        return self.role.rank >= Role(role).rank


Tenant = Caller
"""The caller seen from the stores: rows are scoped by its ``user_id``."""


def caller_name(caller: Caller | None) -> str:
    """Who caused a step, as audit logs record it: the signed-in user's name, or
    ``cli:<os user>`` for the local operator (``cli:operator`` when the system names nobody)."""
    if caller is not None:
        return caller.name
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        user = "operator"
    return f"cli:{user}"


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """Base of an app's run context (``context_schema``): the tenant travels with the ids the
    model must not choose. Subclass it with the app's own ids::

        @dataclass(frozen=True)
        class DocumentRef(RunContext):
            document_id: int

        agent.run(prompt, context=DocumentRef(document_id=7, tenant=caller))
    """

    tenant: Caller | None = None
    """Whose run this is; ``None`` is the local operator (CLI, evals): unscoped."""


class PermissionDenied(CaseworkError):
    """The caller is known but may not do this (a 403, not a 401)."""

    exit_code = 2


class TenantScoped:
    """Mixin for tables whose rows belong to a user: ``owner_id`` null means shared, read-only."""

    owner_id: Mapped[int | None] = mapped_column(Integer, index=True, default=None)


def owner_for(tenant: Caller | None) -> int | None:
    """The ``owner_id`` a new row gets: the tenant's, or shared when the operator writes it."""
    return tenant.user_id if tenant is not None else None


def visible_to(
    owner_column: QueryableAttribute[int | None], tenant: Caller | None
) -> ColumnElement[bool]:
    """WHERE clause for reads: the tenant's own rows plus shared ones (all rows for the operator)."""
    if tenant is None:
        return true()
    return or_(owner_column == tenant.user_id, owner_column.is_(None))


def writable_by(
    owner_column: QueryableAttribute[int | None], tenant: Caller | None
) -> ColumnElement[bool]:
    """WHERE clause for updates and deletes: only the tenant's own rows (shared rows are read-only)."""
    if tenant is None:
        return true()
    return owner_column == tenant.user_id
