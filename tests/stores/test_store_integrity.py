"""The SQLite store's own file: private modes whatever the umask, and a damaged, truncated or
unwritable file answered as one sentence naming it (``StoreUnavailable``), by every statement
and by ``store_problem`` (what ``/health`` asks)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from casework.errors import StoreUnavailable
from casework.stores.sql import get_engine, migrate, private_dir, store_problem


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _migrated(db: Path) -> Path:
    engine = get_engine(f"sqlite:///{db}")
    migrate(engine)
    engine.dispose()  # the WAL checkpointed into the file: what a backup copy would hold
    return db


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o277])
def test_home_is_0700_and_the_database_files_0600_whatever_the_umask(tmp_path, umask) -> None:
    home = tmp_path / f"home-{umask:o}"
    old = os.umask(umask)
    try:
        engine = get_engine(f"sqlite:///{home}/casework.db")
        migrate(engine)
        with engine.begin() as conn:  # a write: the -wal and -shm exist now
            conn.execute(text("CREATE TABLE t (x)"))
            conn.execute(text("INSERT INTO t VALUES (1)"))
            files = sorted(p.name for p in home.iterdir())
            modes = {p.name: _mode(p) for p in home.iterdir()}
    finally:
        os.umask(old)
    assert _mode(home) == 0o700
    assert files == ["casework.db", "casework.db-shm", "casework.db-wal"]
    assert modes == dict.fromkeys(files, 0o600)


def test_an_existing_folder_keeps_its_mode(tmp_path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    private_dir(shared)
    assert _mode(shared) == 0o755


def test_random_bytes_are_one_sentence_naming_the_file(tmp_path) -> None:
    db = tmp_path / "home" / "casework.db"
    db.parent.mkdir()
    db.write_bytes(os.urandom(64 * 1024))
    with pytest.raises(StoreUnavailable) as caught, get_engine(f"sqlite:///{db}").connect() as c:
        c.execute(text("SELECT 1"))
    sentence = str(caught.value)
    assert sentence.startswith(f"The database {db} is damaged") and "\n" not in sentence
    assert "(file is not a database)" in sentence and "`casework doctor`" in sentence
    assert caught.value.store == "casework.db"
    problem = store_problem(f"sqlite:///{db}")
    assert problem is not None and "file is not a database" in str(problem)


def test_a_truncated_file_is_found_while_the_pool_still_holds_it(tmp_path) -> None:
    db = _migrated(tmp_path / "c.db")
    url = f"sqlite:///{db}"
    with get_engine(url).connect() as conn:  # a pooled connection, open before the damage
        conn.execute(text("SELECT count(*) FROM sqlite_master"))
    assert store_problem(url) is None
    size = db.stat().st_size
    with db.open("r+b") as fh:
        fh.truncate(size // 2)
    problem = store_problem(url)
    assert problem is not None and problem.store == "c.db"
    assert str(problem).startswith(f"The database {db} is damaged")
    assert "(database disk image is malformed)" in str(problem)


def test_health_answers_503_naming_the_store_and_not_its_folder(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from casework.config import Settings
    from casework.server import create_app

    home = tmp_path / "home"
    settings = Settings(home=home, allow_network_models=False)
    client = TestClient(create_app(settings))
    assert client.get("/health").status_code == 200
    (home / "casework.db").write_bytes(os.urandom(64 * 1024))
    res = client.get("/health")
    assert res.status_code == 503
    body = res.json()
    assert (body["status"], body["store"]) == ("unavailable", "casework.db")
    assert "`casework doctor`" in body["error"] and str(tmp_path) not in res.text
