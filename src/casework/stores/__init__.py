"""Stores: SQLAlchemy + Alembic, Chroma vectors, offline embeddings; ``open_stores`` opens them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import lazy_names

if TYPE_CHECKING:
    from casework.stores.factory import Stores, open_stores
    from casework.stores.sql import Base, get_engine, migrate, session_scope

__all__ = ["Base", "Stores", "get_engine", "migrate", "open_stores", "session_scope"]

# SQLAlchemy loads with the first store opened, not with the package.
__getattr__ = lazy_names(
    "casework.stores",
    {
        "Stores": "factory",
        "open_stores": "factory",
        "Base": "sql",
        "get_engine": "sql",
        "migrate": "sql",
        "session_scope": "sql",
    },
)
