"""Read-only execution: the connection itself refuses writes, rows are capped, time is bounded."""

from __future__ import annotations

import sqlite3

import pytest

from casework.apps.sql.database import execute_read_only, open_sqlite_read_only, sqlite_path
from casework.errors import InputError


def _count(url: str) -> int:
    with sqlite3.connect(sqlite_path(url)) as conn:
        return conn.execute("SELECT COUNT(*) FROM users").fetchone()[0]


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM users",
        "UPDATE users SET status = 'active'",
        "INSERT INTO users (id, username) VALUES (999, 'x')",
        "DROP TABLE users",
        "CREATE TABLE evil (x INTEGER)",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA journal_mode = DELETE",
    ],
)
def test_the_connection_refuses_writes_without_the_validator(security_db, statement):
    before = _count(security_db)
    with pytest.raises(InputError, match="The database refused the query: not authorized"):
        execute_read_only(security_db, statement)
    assert _count(security_db) == before


def test_mode_ro_refuses_writes_even_without_the_authorizer(security_db):
    conn = open_sqlite_read_only(sqlite_path(security_db))
    conn.set_authorizer(None)
    with pytest.raises(sqlite3.OperationalError, match="readonly database"):
        conn.execute("DELETE FROM users")
    conn.close()


def test_rows_are_capped_and_timeouts_stop_the_query(security_db):
    result = execute_read_only(security_db, "SELECT id FROM alerts ORDER BY id", max_rows=5)
    assert (
        result.rows == [[1], [2], [3], [4], [5]] and result.truncated and result.columns == ["id"]
    )
    full = execute_read_only(security_db, "SELECT COUNT(*) AS n FROM alerts")
    assert full.rows == [[60]] and not full.truncated
    forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT MAX(i) FROM n"
    with pytest.raises(InputError, match=r"ran longer than 0\.2 s and was stopped"):
        execute_read_only(security_db, forever, timeout_seconds=0.2)


def test_a_missing_database_is_one_sentence(tmp_path):
    with pytest.raises(
        InputError, match=r"No SQLite database at .*; create one with `casework sql db create`"
    ):
        execute_read_only(f"sqlite:///{tmp_path}/none.sqlite", "SELECT 1")
