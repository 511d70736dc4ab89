"""``RoleModels``: the one role -> model source (resolved once per role, named by its spec)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from casework.config import Models, Settings
from casework.errors import ConfigError, InputError
from casework.llm import (
    LOCAL_ROLE,
    RecordingChatModel,
    ReplayChatModel,
    RoleModels,
    ScriptedChatModel,
    model_name,
    say,
)


def _settings(tmp_path: Path, **models: str) -> Settings:
    return Settings(
        home=tmp_path / "home",
        allow_network_models=False,
        models=Models(default="ollama:base", **models),
    )


def _cassette(tmp_path: Path) -> Path:
    """A cassette of one answer, recorded from a scripted model."""
    path = tmp_path / "one.jsonl"
    RecordingChatModel.wrap(ScriptedChatModel(steps=[say("hello")]), path).invoke("hi")
    return path


def test_specs_per_role_and_an_override_for_every_role_but_local_and_vision(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path, judge="ollama:judge", vision="ollama:llava")
    plain = RoleModels(settings)
    assert [plain.spec(r) for r in ("specialist", "judge", LOCAL_ROLE, "vision")] == [
        "ollama:base",
        "ollama:judge",
        "local:qwen2.5-coder-1.5b",
        "ollama:llava",
    ]
    over = RoleModels(settings, "ollama:big", vision="ollama:eyes")
    assert [over.name(r) for r in ("specialist", "judge", LOCAL_ROLE, "vision")] == [
        "ollama:big",
        "ollama:big",
        "local:qwen2.5-coder-1.5b",
        "ollama:eyes",
    ]
    with pytest.raises(ConfigError, match="No vision model is configured"):
        RoleModels(_settings(tmp_path)).spec("vision")


def test_each_role_is_resolved_once_and_named_by_its_spec(tmp_path: Path) -> None:
    spec = f"replay:{_cassette(tmp_path)}"
    models = RoleModels(_settings(tmp_path), spec)
    got: list[object] = []

    def ask() -> None:
        got.append(models("specialist"))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert isinstance(got[0], ReplayChatModel) and all(m is got[0] for m in got)
    assert models("judge") is not got[0]  # one model per role
    assert models.name("specialist") == spec
    assert models("specialist").invoke("hi").content == "hello"


def test_given_models_are_named_by_their_own_name(tmp_path: Path) -> None:
    agent = ScriptedChatModel(model_name="scripted-agent")
    judge = ScriptedChatModel(model_name="scripted-judge")
    one = RoleModels.given(agent)
    assert one("judge") is agent and one.name("specialist") == "scripted-agent"
    table = RoleModels.given({"judge": judge, "default": agent})
    assert (table("judge"), table("specialist")) == (judge, agent)
    assert (table.name("judge"), table.name("orchestrator")) == ("scripted-judge", "scripted-agent")
    with pytest.raises(ConfigError, match="No model was given for the judge role"):
        RoleModels.given({"specialist": agent})("judge")
    assert model_name(object()) == "object"


def test_routed_serves_a_role_by_another_roles_model(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    local = ScriptedChatModel(model_name="local-one")
    other = ScriptedChatModel(model_name="remote-one")
    given = RoleModels.given({LOCAL_ROLE: local, "default": other})
    routed = given.routed({"annotator": LOCAL_ROLE})
    assert routed("annotator") is local and routed("judge") is other
    assert routed.name("annotator") == "local-one"
    on_settings = RoleModels(settings, "ollama:big").routed({"annotator": LOCAL_ROLE})
    assert on_settings.name("annotator") == "local:qwen2.5-coder-1.5b"
    assert on_settings.name("judge") == "ollama:big"


def test_a_key_needs_its_model_and_never_shows(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with pytest.raises(InputError, match="A provider key needs the model it is for"):
        RoleModels(settings, api_key="sk-secret")
    models = RoleModels(settings, "openai:gpt-4o-mini", api_key="sk-secret")
    assert "sk-secret" not in repr(models) and "sk-secret" not in str(vars(models))
    assert repr(models) == "RoleModels(override='openai:gpt-4o-mini', vision=None)"
