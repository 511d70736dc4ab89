"""Queries and writes of the vanpool app. Every write that changes a case also appends to the
audit log in the same transaction, so the log and the state never disagree.

One class, ``VanpoolRepository``, made of one part per aggregate: ``vanpools`` (the roster),
``cases``, ``threads`` (email), ``audit`` and ``approvals``; ``transaction`` holds the caller
and the unit of work they share.

A repository acts for one caller (``by(caller)``): the user, or the local operator, who caused
the writes; every audit row it appends names them. ``transaction()`` makes every call inside
it one transaction (a reply's handling: nothing of it survives a crash half-way), and runs
what was handed to ``after_commit`` (the SMTP send) only once it has committed."""

from __future__ import annotations

from casework.apps.vanpool.repository.approvals import (
    APPROVAL_REQUESTED,
    REVIEW_DECISION,
    ApprovalStore,
)
from casework.apps.vanpool.repository.cases import OPEN_STATUSES, CaseStore
from casework.apps.vanpool.repository.threads import ThreadStore
from casework.apps.vanpool.repository.vanpools import RosterStore

__all__ = [
    "APPROVAL_REQUESTED",
    "OPEN_STATUSES",
    "REVIEW_DECISION",
    "VanpoolRepository",
]


class VanpoolRepository(RosterStore, CaseStore, ThreadStore, ApprovalStore):
    """The vanpool app's store; the calls inside ``transaction()`` are one transaction."""

    def by(self, caller: str) -> VanpoolRepository:
        """The same store, writing for ``caller``."""
        return VanpoolRepository(self.engine, caller)
