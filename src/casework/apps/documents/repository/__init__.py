"""Queries of the documents app, every one scoped by the caller's user id.

One class, ``DocumentsRepository``, made of one part per aggregate: ``documents``,
``extractions``, ``runs``, ``stacks`` and ``failed`` (the review inbox's failed extractions).

Documents are private (``owner_id`` is never null), so reads and writes both filter on
``owner_id == user_id``: another user's document, extraction or stack is indistinguishable from
one that does not exist (the same ``NotFoundError`` sentence). JSON-path edits run as the spec's
SQL functions on PostgreSQL and with SQLite's JSON functions on SQLite; both are preceded by
the same path checks, so the two databases behave alike.
"""

from __future__ import annotations

from casework.apps.documents.repository.extractions import CompletionCheck, ExtractionStore
from casework.apps.documents.repository.failed import (
    REVIEW_ACTION,
    REVIEW_THREAD_PREFIX,
    FailedExtractionStore,
)
from casework.apps.documents.repository.runs import RunStore
from casework.apps.documents.repository.stacks import StackStore

__all__ = ["REVIEW_ACTION", "REVIEW_THREAD_PREFIX", "CompletionCheck", "DocumentsRepository"]


class DocumentsRepository(ExtractionStore, RunStore, StackStore, FailedExtractionStore):
    """The documents app's store (SQLite or PostgreSQL); every method opens its own session."""
