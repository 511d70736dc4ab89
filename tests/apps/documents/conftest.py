"""Fixtures: a migrated repository on SQLite (default) or PostgreSQL (slow), two users."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.repository import DocumentsRepository
from casework.config import get_settings
from casework.stores.sql import get_engine, migrate

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_fixtures import FakeOcr


@pytest.fixture(scope="session")
def pg_url():
    from pg import PostgresServer

    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def _sqlite_repo(tmp_path: Path) -> DocumentsRepository:
    engine = get_engine(f"sqlite:///{tmp_path / 'docs.db'}")
    migrate(engine)
    return DocumentsRepository(engine)


@pytest.fixture
def repo(tmp_path: Path) -> DocumentsRepository:
    return _sqlite_repo(tmp_path)


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=[pytest.mark.slow, pytest.mark.postgres])]
)
def any_repo(request: pytest.FixtureRequest, tmp_path: Path) -> DocumentsRepository:
    """The same suite on both databases (PostgreSQL runs the spec's SQL functions)."""
    if request.param == "sqlite":
        return _sqlite_repo(tmp_path)
    engine = get_engine(request.getfixturevalue("pg_url"))
    migrate(engine)
    return DocumentsRepository(engine)


@pytest.fixture
def deps(repo: DocumentsRepository) -> DocumentsDeps:
    return DocumentsDeps(repo=repo, settings=get_settings(), ocr=FakeOcr())
