"""The vanpool store on a real PostgreSQL server: migration, import, audit, append-only log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from vanpool_helpers import START, Clock, first

from casework.apps.vanpool import lifecycle, service
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
    # A reply's handling is one transaction whose first write claims it, here as there.
    step = service.reply_to_case(deps, case.case_id, "When does the van leave?", "rules")
    assert step.outreach is not None and step.outreach.sent and len(sink.messages) == 2
    [reply] = [m for m in deps.repo.messages(case.thread_id) if m.direction == "inbound"]
    again = service.process_reply(deps, reply.message_id, "acknowledgment")
    assert again.outreach is not None and "handled already" in again.outreach.reasoning
    assert len(sink.messages) == 2 and service.tick(deps, "rules")["replies"] == []
    log = deps.repo.audit_log(case_id=case.case_id)
    assert {a["caller"] for a in log} == {deps.repo.caller} and deps.repo.caller.startswith("cli:")
