"""The vanpool store on a real PostgreSQL server: migration, import, audit, append-only log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from vanpool_helpers import START, Clock, first

from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.deps import build_deps
from casework.apps.vanpool.roster import import_roster
from casework.apps.vanpool.settings import VanpoolSettings
from casework.apps.vanpool.synth import DATA_DIR
from casework.config import Settings
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_url():
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def test_vanpool_on_postgres(pg_url, tmp_path, sink, truth) -> None:
    clock = Clock()
    deps = build_deps(
        Settings(home=tmp_path, database_url=pg_url),
        app=VanpoolSettings(smtp_port=sink.port),
        clock=clock,
    )
    assert import_roster(deps.repo, DATA_DIR / "roster.json", START).added["riders"] == 240
    result, _ = lifecycle.audit_vanpool(deps, first(truth, "both_mismatch")["vanpool_id"])
    case = deps.repo.get_case(result.case_id)
    assert (case.status, case.failed_checks, case.due_at.tzinfo is not None) == (
        "pending_reply",
        ["location", "shift"],
        True,
    )
    assert len(sink.messages) == 1
    with deps.repo.engine.begin() as conn, pytest.raises(DatabaseError, match="append-only"):
        conn.execute(text("DELETE FROM vanpool_audit_log"))
    assert len(deps.repo.audit_log(case_id=case.case_id)) >= 2
