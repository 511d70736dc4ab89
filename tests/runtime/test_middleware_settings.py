"""ModelSettings: the settings an agent asks for reach every model call's binding."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool
from pydantic import BaseModel

from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime import ReactAgent
from casework.runtime.middleware import ModelSettings
from casework.runtime.runconfig import RunConfig


@tool
def look() -> str:
    """Look."""
    return "seen"


class Verdict(BaseModel):
    """Final decision."""

    verdict: str


class Recording(ScriptedChatModel):
    """A scripted model that keeps what each binding was asked for."""

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        _BINDINGS.append(dict(kwargs))
        return super().bind_tools(tools, tool_choice=tool_choice, **kwargs)


_BINDINGS: list[dict[str, Any]] = []


def test_every_model_call_is_bound_with_the_agents_settings() -> None:
    _BINDINGS.clear()
    model = Recording(steps=[call("look"), call("submit_decision", verdict="ok")])
    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(model)),
        role="agent",
        tools=[look],
        decision_model=Verdict,
        system_prompt="decide",
        middleware=[ModelSettings(max_tokens=1024)],
    )
    result = agent.run("go")
    assert result.decision == Verdict(verdict="ok")
    assert _BINDINGS == [{"max_tokens": 1024}, {"max_tokens": 1024}]
