"""The sql app on a real PostgreSQL server on loopback: create, reflect, validate for the
postgres dialect, and read-only execution refused by the server itself."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from casework.apps.sql.database import create_database, execute_read_only
from casework.apps.sql.schemas import reflect_schema
from casework.apps.sql.validation import validate_sql
from casework.errors import InputError
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_url():
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def test_create_reflect_validate_and_run_read_only_on_postgres(security, pg_url):
    counts = create_database(security, pg_url, rows=20, seed=2, anchor=datetime(2026, 11, 1))
    assert counts["alerts"] == 20
    assert sorted(reflect_schema(pg_url).tables) == sorted(security.tables)

    query = "SELECT COUNT(*) FROM alerts WHERE created_at > CAST('2026-11-01' AS TIMESTAMP) - INTERVAL '30 days'"
    result = validate_sql(query, security, dialect="postgres")
    assert result.valid and "INTERVAL" in result.transpiled.upper()
    rows = execute_read_only(pg_url, result.transpiled).rows
    assert 0 < rows[0][0] <= 20

    # Refused by the READ ONLY transaction, not by the validator (which is bypassed here).
    with pytest.raises(InputError, match="read-only transaction"):
        execute_read_only(pg_url, "DELETE FROM alerts")
    assert execute_read_only(pg_url, "SELECT COUNT(*) FROM alerts").rows == [[20]]
    with pytest.raises(InputError, match=r"ran longer than 0\.3 s"):
        execute_read_only(pg_url, "SELECT pg_sleep(3)", timeout_seconds=0.3)
    capped = execute_read_only(pg_url, "SELECT id FROM alerts ORDER BY id", max_rows=3)
    assert capped.rows == [[1], [2], [3]] and capped.truncated
