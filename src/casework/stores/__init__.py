"""Stores: SQLAlchemy + Alembic, Chroma vectors, offline embeddings; ``open_stores`` opens them."""

from casework.stores.factory import Stores, open_stores
from casework.stores.sql import Base, get_engine, migrate, session_scope

__all__ = ["Base", "Stores", "get_engine", "migrate", "open_stores", "session_scope"]
