"""Receipts, words, places, labels and edge cases in SQL; returns domain models.

One class, ``ReceiptsRepository``, made of one part per aggregate: ``receipts`` (the reads of
receipts, lines, words and places), ``imports`` (writing parsed receipts), ``labels``
(append-only labels and the review inbox), ``edge_cases``; ``tenancy`` scopes them all.

A repository is bound to a tenant (``for_tenant``), never told one per call: every read sees
the tenant's own receipts plus the shared ones (owner NULL), and lines, words, labels and
places are reached only through a visible receipt, so another user's row answers exactly as
one that does not exist. Label changes need a receipt the tenant may write: its own, or a
shared one when the tenant is a reviewer or admin (they curate the shared set). The tenant
``None`` is the local operator (CLI, evals, seeding): everything, unscoped.
"""

from __future__ import annotations

from casework.apps.receipts.repository.edge_cases import EdgeCaseStore
from casework.apps.receipts.repository.imports import ReceiptImports
from casework.apps.receipts.repository.labels import LabelChange, LabelStore, WaitingLabel
from casework.runtime.context import Caller

__all__ = ["LabelChange", "ReceiptsRepository", "WaitingLabel"]


class ReceiptsRepository(ReceiptImports, LabelStore, EdgeCaseStore):
    """Receipts in SQL (SQLite or PostgreSQL); every method opens and closes its own session."""

    def for_tenant(self, tenant: Caller | None) -> ReceiptsRepository:
        """The same store seen by ``tenant`` (``None``: the local operator, unscoped)."""
        return ReceiptsRepository(self.engine, tenant)
