"""Tenant scoping: a user reads their rows and the shared ones, writes only their own."""

from __future__ import annotations

import json
from dataclasses import dataclass

from langchain.tools import ToolRuntime, tool
from sqlalchemy import Integer, MetaData, String, create_engine, delete, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.pool import StaticPool

from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime import Decision, ReactAgent
from casework.runtime.context import (
    Caller,
    Role,
    RunContext,
    TenantScoped,
    owner_for,
    visible_to,
    writable_by,
)
from casework.runtime.runconfig import RunConfig


class _Base(DeclarativeBase):
    metadata = MetaData()


class Note(TenantScoped, _Base):
    __tablename__ = "notes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(String(50))


ANA = Caller(user_id=1, name="ana", role=Role.USER)
BOB = Caller(user_id=2, name="bob", role=Role.ADMIN)


def _session() -> Session:
    # One shared connection: tools run in worker threads and must see the same in-memory db.
    engine = create_engine(
        "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
    )
    _Base.metadata.create_all(engine)
    session = Session(engine)
    session.add_all(
        [
            Note(text="demo", owner_id=owner_for(None)),
            Note(text="ana's", owner_id=owner_for(ANA)),
            Note(text="bob's", owner_id=owner_for(BOB)),
        ]
    )
    session.commit()
    return session


def _texts(session: Session, where) -> list[str]:
    return list(session.scalars(select(Note.text).where(where).order_by(Note.id)))


def test_reads_see_own_and_shared_rows_writes_only_own():
    session = _session()
    assert Note.__table__.c.owner_id.nullable and Note.__table__.c.owner_id.index
    assert _texts(session, visible_to(Note.owner_id, ANA)) == ["demo", "ana's"]
    assert _texts(session, visible_to(Note.owner_id, BOB)) == ["demo", "bob's"]
    assert _texts(session, visible_to(Note.owner_id, None)) == ["demo", "ana's", "bob's"]
    assert _texts(session, writable_by(Note.owner_id, ANA)) == ["ana's"]
    # A role does not widen data access: an admin's rows are scoped like anyone's.
    session.execute(delete(Note).where(writable_by(Note.owner_id, BOB)))
    assert _texts(session, visible_to(Note.owner_id, None)) == ["demo", "ana's"]
    session.execute(delete(Note).where(Note.text == "demo", writable_by(Note.owner_id, ANA)))
    assert _texts(session, visible_to(Note.owner_id, ANA)) == ["demo", "ana's"]


@dataclass(frozen=True)
class NotesRef(RunContext):
    topic: str = "all"


def test_a_tool_scopes_by_the_run_context_tenant_the_model_never_sees():
    session = _session()

    @tool
    def list_notes(runtime: ToolRuntime[NotesRef]) -> list[str]:
        """The notes the current user may read."""
        return _texts(session, visible_to(Note.owner_id, runtime.context.tenant))

    assert list_notes.tool_call_schema.model_json_schema()["properties"] == {}
    for caller, expected in ((ANA, ["demo", "ana's"]), (None, ["demo", "ana's", "bob's"])):
        agent = ReactAgent(
            config=RunConfig(
                models=RoleModels.given(
                    ScriptedChatModel(
                        steps=[
                            call("list_notes"),
                            call(
                                "submit_decision", verdict="VALID", confidence=90, reasoning="read"
                            ),
                        ]
                    )
                )
            ),
            role="agent",
            tools=[list_notes],
            decision_model=Decision,
            system_prompt="List the notes.",
            context_schema=NotesRef,
        )
        result = agent.run("go", context=NotesRef(tenant=caller), trace=False)
        assert result.tool_calls[0].args == {}
        assert json.loads(result.tool_calls[0].output) == expected
