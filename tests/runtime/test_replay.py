"""Record a run to a cassette, replay it offline, and fail loudly on drift."""

from __future__ import annotations

import pytest
from langchain.tools import tool

from casework.errors import ReplayDriftError
from casework.llm import RecordingChatModel, ReplayChatModel, ScriptedChatModel, call, resolve_model
from casework.llm.roles import RoleModels
from casework.runtime import ReactAgent
from casework.runtime.runconfig import RunConfig
from casework.smoke import OrderRef, SmokeDecision, build_smoke_agent, get_customer


def script():
    return [
        call("get_order_status"),
        call("submit_decision", verdict="VALID", confidence=92, reasoning="delivered"),
    ]


def test_record_then_replay_gives_the_same_run(tmp_path):
    path = tmp_path / "run.jsonl"
    recorded = build_smoke_agent(
        RunConfig(
            models=RoleModels.given(
                RecordingChatModel.wrap(ScriptedChatModel(steps=script()), path)
            )
        )
    ).run("check", context=OrderRef("A-1001"), trace=False)
    replayed = build_smoke_agent(
        RunConfig(models=RoleModels.given(resolve_model(f"replay:{path}")))
    ).run("check", context=OrderRef("A-1001"), trace=False)
    assert replayed.decision == recorded.decision
    assert replayed.tool_names == recorded.tool_names == ["get_order_status", "submit_decision"]


def test_prompt_drift_fails_with_a_clear_message(tmp_path):
    path = tmp_path / "run.jsonl"
    build_smoke_agent(
        RunConfig(
            models=RoleModels.given(
                RecordingChatModel.wrap(ScriptedChatModel(steps=script()), path)
            )
        )
    ).run("check", context=OrderRef(), trace=False)
    with pytest.raises(ReplayDriftError, match="the prompt changed"):
        build_smoke_agent(RunConfig(models=RoleModels.given(ReplayChatModel.from_path(path)))).run(
            "check something else", context=OrderRef(), trace=False
        )


def test_tool_schema_drift_fails_with_a_clear_message(tmp_path):
    path = tmp_path / "run.jsonl"
    build_smoke_agent(
        RunConfig(
            models=RoleModels.given(
                RecordingChatModel.wrap(ScriptedChatModel(steps=script()), path)
            )
        )
    ).run("check", context=OrderRef(), trace=False)

    @tool("get_order_status")
    def changed(order_id: str) -> str:
        """Now takes an argument."""
        return "x"

    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(ReplayChatModel.from_path(path))),
        role="agent",
        tools=[changed, get_customer],
        decision_model=SmokeDecision,
        system_prompt=build_smoke_agent(
            RunConfig(models=RoleModels.given(ScriptedChatModel()))
        ).graph
        and __import__("casework.smoke").smoke.SYSTEM,
    )
    with pytest.raises(ReplayDriftError, match="tool schema changed"):
        agent.run("check", context=OrderRef(), trace=False)


def test_missing_cassette_is_a_config_error(tmp_path):
    from casework.errors import ConfigError

    with pytest.raises(ConfigError, match="record"):
        resolve_model(f"replay:{tmp_path}/none.jsonl")
