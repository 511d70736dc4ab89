"""open_stores: the engine migrated once per URL, the vector client opened only when used."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import event, inspect

from casework.config import Settings
from casework.stores import open_stores
from casework.stores import vector as vector_module


def test_migrated_once_per_url_and_again_after_the_file_is_gone(tmp_path: Path):
    settings = Settings(home=tmp_path / "home")
    stores = open_stores(settings)
    assert "receipts_words" in inspect(stores.engine).get_table_names()
    statements: list[str] = []
    listen = lambda *a: statements.append(a[2])  # noqa: E731
    event.listen(stores.engine, "before_cursor_execute", listen)
    try:
        again = open_stores(settings)
    finally:
        event.remove(stores.engine, "before_cursor_execute", listen)
    assert again.engine is stores.engine and statements == []  # no second migration

    stores.engine.dispose()
    (tmp_path / "home" / "casework.db").unlink()
    fresh = open_stores(settings)
    assert "receipts_words" in inspect(fresh.engine).get_table_names()


def test_the_vector_store_opens_on_first_use(tmp_path: Path):
    settings = Settings(home=tmp_path / "home")
    stores = open_stores(settings, vectors_dir=tmp_path / "vectors")
    assert not (tmp_path / "vectors").exists()
    assert not vector_module.is_open(tmp_path / "vectors")
    client = stores.vector_client()
    assert (tmp_path / "vectors").is_dir() and stores.vector_client() is client
    assert vector_module.is_open(tmp_path / "vectors")
    collection = stores.collection("open-stores-test")
    assert collection.name == "open-stores-test" and collection.count() == 0


def test_without_migrations_the_database_stays_empty(tmp_path: Path):
    stores = open_stores(
        Settings(home=tmp_path / "home"),
        db_url=f"sqlite:///{tmp_path / 'other.db'}",
        run_migrations=False,
    )
    assert inspect(stores.engine).get_table_names() == []
