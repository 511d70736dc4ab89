"""Approval interrupts (approve / edit / reject) and side effects that happen exactly once."""

from __future__ import annotations

import pytest
from langchain.tools import ToolRuntime, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from casework.config import Limits
from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime import ReactAgent
from casework.runtime.approvals import SideEffectJournal, effect_key, request_approval
from casework.runtime.runconfig import RunConfig
from casework.stores.sql import get_engine, migrate

OUTBOX: list[dict] = []


@pytest.fixture
def journal(tmp_path):
    engine = get_engine(f"sqlite:///{tmp_path}/j.db")
    migrate(engine)
    OUTBOX.clear()
    return SideEffectJournal(engine)


class Outcome(BaseModel):
    """Outcome."""

    verdict: str
    confidence: float = Field(ge=0, le=100)
    reasoning: str


def build(journal: SideEffectJournal, steps, limits=None, **kw):
    @tool
    def send_email(to: str, body: str, runtime: ToolRuntime) -> str:
        """Send an email (needs approval)."""
        thread = runtime.config["configurable"]["thread_id"]
        args = {"to": to, "body": body}
        return journal.once(
            effect_key(thread, "send_email", args),
            lambda key: OUTBOX.append(args) or f"sent to {to}",
            thread_id=thread,
            action="send_email",
            args=args,
        )

    return ReactAgent(
        config=RunConfig(models=RoleModels.given(ScriptedChatModel(steps=steps)), limits=limits),
        role="agent",
        tools=[send_email],
        decision_model=Outcome,
        system_prompt="s",
        approvals={"send_email": True},
        checkpointer=InMemorySaver(),
        **kw,
    )


def steps():
    return [
        call("send_email", to="a@x.org", body="hi"),
        call("submit_decision", verdict="DONE", confidence=90, reasoning="r"),
    ]


def test_approve_sends_once(journal):
    agent = build(journal, steps())
    paused = agent.run("email a", thread_id="t1", trace=False)
    assert paused.ended_by == "interrupted" and paused.decision is None
    request = paused.interrupts[0]["value"]["action_requests"][0]
    assert request["name"] == "send_email" and request["args"] == {"to": "a@x.org", "body": "hi"}
    assert OUTBOX == []
    done = agent.resume("t1", [{"type": "approve"}], trace=False)
    assert done.ended_by == "submit" and OUTBOX == [{"to": "a@x.org", "body": "hi"}]
    assert journal.count("send_email") == 1


def test_edit_sends_the_edited_email(journal):
    agent = build(journal, steps())
    agent.run("email a", thread_id="t2", trace=False)
    edited = {"name": "send_email", "args": {"to": "b@x.org", "body": "edited"}}
    done = agent.resume("t2", [{"type": "edit", "edited_action": edited}], trace=False)
    assert done.ended_by == "submit"
    assert OUTBOX == [{"to": "b@x.org", "body": "edited"}]


def test_reject_sends_nothing(journal):
    agent = build(journal, steps())
    agent.run("email a", thread_id="t3", trace=False)
    done = agent.resume("t3", [{"type": "reject", "message": "not this one"}], trace=False)
    assert done.ended_by == "submit" and OUTBOX == []
    rejected = next(c for c in done.tool_calls if c.name == "send_email")
    assert rejected.ok is False


class FlowState(TypedDict, total=False):
    to: str
    sent: str


def test_node_rerun_after_resume_never_repeats_the_side_effect(journal):
    """A node reruns from its start on resume; the journal keeps the send single."""
    runs = {"node": 0}

    def notify(state: FlowState, config) -> dict:
        runs["node"] += 1
        args = {"to": state["to"]}
        key = effect_key(config["configurable"]["thread_id"], "notify", args)
        # side effect BEFORE the approval point, deliberately: the rerun must not repeat it
        journal.once(key, lambda _key: OUTBOX.append(args) or "ok", action="notify", args=args)
        answer = request_approval("close_case", {"to": state["to"]}, "Close the case?")
        return {"sent": answer["type"]}

    graph = StateGraph(FlowState)
    graph.add_node("notify", notify)
    graph.add_edge(START, "notify")
    graph.add_edge("notify", END)
    app = graph.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "n1"}}
    first = app.invoke({"to": "c@x.org"}, cfg)
    assert "__interrupt__" in first and first["__interrupt__"][0].value["action"] == "close_case"
    final = app.invoke(Command(resume={"type": "approve"}), cfg)
    assert final["sent"] == "approve"
    assert runs["node"] == 2  # the node really did run twice
    assert OUTBOX == [{"to": "c@x.org"}] and journal.count("notify") == 1


def test_limit_after_an_approved_tool_ends_without_asking_again(journal):
    """With approvals the run ends before the model node: the approval hook must not see an
    empty turn and ask for the already-approved email a second time."""
    steps = [call("send_email", to="a@x.org", body="hi")] * 3
    agent = build(journal, steps, limits=Limits(max_model_calls=1))
    paused = agent.run("email a", thread_id="t5", trace=False)
    assert paused.ended_by == "interrupted"
    done = agent.resume("t5", [{"type": "approve"}], trace=False)
    assert done.ended_by == "limit:model_calls" and done.interrupts == []
    assert done.decision.verdict == "NEEDS_REVIEW"
    assert OUTBOX == [{"to": "a@x.org", "body": "hi"}]
