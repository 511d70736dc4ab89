"""Migrations and a checkpoint round trip on a real PostgreSQL server started on loopback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from casework.llm.roles import RoleModels
from casework.runtime.runconfig import RunConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from casework.llm import ScriptedChatModel, call
from casework.runtime.checkpoint import postgres_checkpointer
from casework.smoke import OrderRef, build_smoke_agent
from casework.stores.sql import get_engine, migrate, migration_status
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_url():
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def test_migrations_reach_every_head(pg_url):
    engine = get_engine(pg_url)
    migrate(engine)
    migrate(engine)  # idempotent
    applied, expected = migration_status(engine)
    assert applied == expected
    assert sorted(applied) == [
        "access_0002",
        "core_0004",
        "documents_0001",
        "evals_0001",
        "hed_0002",
        "receipts_0002",
        "sql_0002",
        "vanpool_0003",
        "web_0001",
    ]
    with engine.connect() as conn:
        tables = set(
            conn.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname='public'")
            ).scalars()
        )
    assert "casework_side_effects" in tables


def test_checkpoint_round_trip(pg_url):
    def responder(messages, tools):
        if any(m.type == "tool" for m in messages):
            return call("submit_decision", verdict="VALID", confidence=93, reasoning="delivered")
        return call("get_order_status")

    with postgres_checkpointer(pg_url) as saver:
        agent = build_smoke_agent(
            RunConfig(models=RoleModels.given(ScriptedChatModel(responder=responder))),
            checkpointer=saver,
        )
        result = agent.run("check", context=OrderRef(), thread_id="pg-thread", trace=False)
        assert result.ended_by == "submit"
    with postgres_checkpointer(pg_url) as saver:  # a new connection reads it back
        agent = build_smoke_agent(
            RunConfig(models=RoleModels.given(ScriptedChatModel())), checkpointer=saver
        )
        state = agent.graph.get_state({"configurable": {"thread_id": "pg-thread"}})
        names = [m.name for m in state.values["messages"] if m.type == "tool"]
        assert names == ["get_order_status", "submit_decision"]
