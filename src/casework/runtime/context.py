"""Who a run is for: the caller (tenant) and how repositories scope rows by it.

The server authenticates a request and hands the handler a ``Caller``; the app puts it into the
run context (``ToolRuntime.context``), so tools and repositories scope by it and the model never
sees or chooses an id. Rows that belong to a user carry ``owner_id`` (``TenantScoped``); a row
with no owner is shared and read-only to users. ``tenant=None`` means the local operator (CLI,
evals): trusted, unscoped.

The FastAPI dependencies here only read what the platform put on the request (the settings on
``app.state``, the authenticated caller on ``request.state``), so an app's ``api.py`` can use
them without importing the server.
"""

from __future__ import annotations

import getpass
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from fastapi import Depends, HTTPException, Request
from sqlalchemy import ColumnElement, Integer, or_, true
from sqlalchemy.orm import Mapped, QueryableAttribute, mapped_column

from casework.errors import CaseworkError

if TYPE_CHECKING:
    from casework.config import Settings

__all__ = [
    "Caller",
    "PermissionDenied",
    "Role",
    "RunContext",
    "Tenant",
    "TenantScoped",
    "caller_name",
    "current_caller",
    "get_settings_dep",
    "owner_for",
    "require_role",
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


async def get_settings_dep(request: Request) -> Settings:
    """FastAPI dependency: the settings ``create_app(settings)`` was built with.

    ``async`` although it awaits nothing: FastAPI runs a plain ``def`` dependency on a worker
    thread, a hop that costs more than the attribute read (and this runs on every request)."""
    settings: Settings = request.app.state.settings  # Starlette's app.state is untyped
    return settings


async def current_caller(request: Request) -> Caller:
    """FastAPI dependency: the caller the platform authenticated for this request (``async``
    to run on the event loop, not on a worker thread; see ``get_settings_dep``).

    A router mounted without the platform's authentication gets a 401 here, never an anonymous
    caller: forgetting the mount-time dependency fails closed.
    """
    caller = getattr(request.state, "caller", None)
    if not isinstance(caller, Caller):
        raise HTTPException(
            status_code=401,
            detail="Send an API token in the Authorization header as 'Bearer TOKEN'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return caller


def require_role(role: Role | str) -> Callable[..., Awaitable[Caller]]:
    """FastAPI dependency factory: ``PermissionDenied`` (a 403) unless the caller has ``role``
    (or a higher one)."""
    needed = Role(role)

    async def check(caller: Caller = Depends(current_caller)) -> Caller:
        if not caller.has_role(needed):
            raise PermissionDenied(
                f"This action needs the {needed} role; {caller.name} is a {caller.role}."
            )
        return caller

    check.__name__ = f"require_{needed}"
    return check
