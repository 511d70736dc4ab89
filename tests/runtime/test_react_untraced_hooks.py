"""casework's own middleware hooks are built without LangSmith's per-call span wrapper while
tracing is off (they run on every step), and with it when tracing is on; other middleware
keep theirs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

import casework.runtime.loop as loop
import casework.runtime.react as react
from casework.llm.roles import RoleModels
from casework.llm.scripted import ScriptedChatModel, call
from casework.runtime.middleware import EvidenceBudget
from casework.runtime.runconfig import RunConfig


class _Decision(BaseModel):
    """Final decision."""

    verdict: str


def _wrapped_names(monkeypatch: pytest.MonkeyPatch, *, tracing: bool) -> list[str]:
    names: list[str] = []
    real = loop.traceable

    def spy(*args: Any, name: str | None = None, **kwargs: Any) -> Any:
        names.append(str(name))
        return real(*args, name=name, **kwargs)

    monkeypatch.setattr(loop, "traceable", spy)
    monkeypatch.setattr(loop, "tracing_is_enabled", lambda: tracing)
    agent = react.ReactAgent(
        config=RunConfig(
            models=RoleModels.given(
                ScriptedChatModel(steps=[call("submit_decision", verdict="VALID")])
            )
        ),
        role="agent",
        tools=[],
        decision_model=_Decision,
        system_prompt="s",
        middleware=[EvidenceBudget(budget=2)],
    )
    assert agent.run("go", trace=False).decision == _Decision(verdict="VALID")
    return sorted(names)


def test_own_hooks_are_untraced_while_tracing_is_off(monkeypatch):
    assert _wrapped_names(monkeypatch, tracing=False) == [
        "evidence_budget.awrap_model_call",
        "evidence_budget.awrap_tool_call",
        "evidence_budget.wrap_model_call",
        "evidence_budget.wrap_tool_call",
    ]


def test_every_hook_is_traced_while_tracing_is_on(monkeypatch):
    assert _wrapped_names(monkeypatch, tracing=True) == [
        "casework.awrap_model_call",
        "casework.awrap_tool_call",
        "casework.wrap_model_call",
        "casework.wrap_tool_call",
        "evidence_budget.awrap_model_call",
        "evidence_budget.awrap_tool_call",
        "evidence_budget.wrap_model_call",
        "evidence_budget.wrap_tool_call",
    ]
