"""The runtime's EvidenceBudget on a scripted ReAct run: which tools count, the nudge, the
primary-evidence rule, repeated calls, the forced submit."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime import ReactAgent
from casework.runtime.middleware import DECIDE_NOW, EVIDENCE_FIRST, REPEATED, EvidenceBudget
from casework.runtime.runconfig import RunConfig


@tool
def primary() -> str:
    """The first look."""
    return "primary facts"


@tool
def extra() -> str:
    """More evidence."""
    return "extra facts"


@tool
def clock() -> str:
    """Not evidence: the time."""
    return "12:00"


class Verdict(BaseModel):
    """Final decision."""

    verdict: str
    confidence: float = Field(ge=0, le=100)
    reasoning: str


def agent(model: ScriptedChatModel, budget: EvidenceBudget) -> ReactAgent[Verdict]:
    return ReactAgent(
        config=RunConfig(models=RoleModels.given(model)),
        role="agent",
        tools=[primary, extra, clock],
        decision_model=Verdict,
        system_prompt="decide",
        middleware=[budget],
    )


def submit():
    return call("submit_decision", verdict="VALID", confidence=90, reasoning="seen enough")


def test_submit_before_the_primary_tool_is_sent_back_and_repeats_are_refused():
    model = ScriptedChatModel(
        steps=[
            submit(),
            call("primary"),
            call("primary"),
            call("clock"),
            call("clock"),
            submit(),
        ]
    )
    budget = EvidenceBudget(budget=5, primary="primary", evidence_tools={"primary", "extra"})
    run = agent(model, budget).run("task", trace=False)
    model.assert_exhausted()
    outputs = [(c.name, c.ok, c.output) for c in run.tool_calls]
    assert outputs == [
        ("submit_decision", False, EVIDENCE_FIRST.format(primary="primary")),
        ("primary", True, "primary facts"),
        ("primary", True, REPEATED.format(tool="primary", submit="submit_decision")),
        ("clock", True, "12:00"),  # not evidence: may repeat
        ("clock", True, "12:00"),
        ("submit_decision", True, outputs[-1][2]),
    ]
    assert run.decision is not None and run.decision.verdict == "VALID"


def test_the_budget_counts_only_evidence_tools_then_nudges_then_forces():
    seen: list[list] = []
    plan = iter([call("clock"), call("primary"), call("extra"), call("clock"), submit()])

    def responder(messages, tools):
        seen.append(messages)
        step = next(plan)
        return AIMessage(content="", tool_calls=step.tool_calls)

    model = ScriptedChatModel(responder=responder)
    budget = EvidenceBudget(budget=2, evidence_tools={"primary", "extra"})
    run = agent(model, budget).run("task", trace=False)
    # After clock and primary only one evidence call: no nudge yet.
    assert not isinstance(seen[2][-1], HumanMessage)
    # After primary and extra: the request to decide ends the next model call's messages.
    assert seen[3][-1].content == DECIDE_NOW.format(n=2, submit="submit_decision")
    # The nudge is not kept in the run's history.
    assert not any(
        isinstance(m, HumanMessage) and m.content.startswith("You have gathered")
        for m in run.messages
    )
    assert [c.name for c in run.tool_calls] == [
        "clock",
        "primary",
        "extra",
        "clock",
        "submit_decision",
    ]


def test_budget_plus_two_forces_the_submit_tool():
    choices: list = []
    budget = EvidenceBudget(budget=0, name="tiny")

    class Request:
        def __init__(self, n: int) -> None:
            self.messages = [HumanMessage("task")] + [
                ToolMessage("x", tool_call_id=f"t{i}", name=f"tool{i}") for i in range(n)
            ]

        def override(self, **kw):
            choices.append(kw)
            return self

    budget.wrap_model_call(Request(1), lambda r: r)
    budget.wrap_model_call(Request(2), lambda r: r)
    assert budget.name == "tiny"
    assert choices[0]["messages"][-1].content == DECIDE_NOW.format(n=1, submit="submit_decision")
    assert choices[1] == {"tool_choice": "submit_decision"}
