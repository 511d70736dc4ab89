"""Stores: SQLAlchemy + Alembic, Chroma vectors, offline embeddings."""

from casework.stores.sql import Base, get_engine, migrate, session_scope

__all__ = ["Base", "get_engine", "migrate", "session_scope"]
