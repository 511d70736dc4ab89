"""casework: agents that decide with evidence.

This package's ``__init__`` is the composition root: it hands the stores, which sit below the
app registry, the registry's list of migration folders (a function, asked when a store is
migrated: nothing heavy is imported here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework.stores.schema import provide_migration_dirs

if TYPE_CHECKING:
    from pathlib import Path

__version__ = "0.1.0"


def _registered_migration_dirs() -> list[Path]:
    from casework.registry import migration_dirs

    return migration_dirs()


provide_migration_dirs(_registered_migration_dirs)
