"""Merchant metadata behind a seam: the local table today, Google Places tomorrow.

A ``PlacesProvider`` answers "what do we know about the merchant of this receipt". The
``LocalPlacesProvider`` reads the ``receipts_places`` table the importer fills from each
receipt's labelled header. A Google Places client would implement the same one method
(``lookup``) with a Text Search / Place Details call keyed by the merchant name and address,
cache the answer in the same table (``source="google"``, ``external_id`` = place id) and be
passed to ``build_deps(places=...)``; nothing else changes.
"""

from __future__ import annotations

from typing import Protocol

from casework.apps.receipts.models import Place, Receipt

__all__ = ["LocalPlacesProvider", "PlacesProvider", "PlacesUnavailable"]


class PlacesUnavailable(Exception):
    """The provider could not answer (network, quota, no match); the tool reports it as unavailable."""


class PlacesProvider(Protocol):
    name: str

    def lookup(self, receipt: Receipt) -> Place | None:
        """The merchant's place for a receipt, or None when there is none."""
        ...


class PlaceStore(Protocol):
    """The one repository method the local provider reads (the SQL repository has it)."""

    def place(self, place_id: int) -> Place | None: ...


class LocalPlacesProvider:
    """Places from the local table (derived at import)."""

    name = "local"

    def __init__(self, repo: PlaceStore) -> None:
        self.repo = repo

    def lookup(self, receipt: Receipt) -> Place | None:
        if receipt.place_id is None:
            return None
        return self.repo.place(receipt.place_id)
