"""Where the schema's migrations live: the core's folder and the folders handed in.

The stores sit below the app registry and never import it. The composition root
(``casework/__init__``) hands in, once, a provider of every registered component's
``migrations/versions`` folder, so whoever opens a store first migrates every branch. Light on
purpose: the package's ``__init__`` imports it on every start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["CORE_MIGRATIONS", "migration_locations", "provide_migration_dirs"]

CORE_MIGRATIONS = Path(__file__).parent / "migrations"

_provider: Callable[[], Sequence[Path]] = tuple


def provide_migration_dirs(provider: Callable[[], Sequence[Path]]) -> None:
    """Set what lists the components' migration folders (called at import time)."""
    global _provider
    _provider = provider


def migration_locations() -> list[Path]:
    """Core migrations plus every folder the provider lists, asked now (apps may register
    late: an entry point installed after start-up still counts at the next migrate)."""
    return [CORE_MIGRATIONS / "versions", *_provider()]
