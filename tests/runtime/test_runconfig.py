"""``RunConfig``: what one run gets beside its deps (models, limits, traces, events, caller)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from casework.config import Limits, Settings
from casework.llm import LOCAL_ROLE, RoleModels, ScriptedChatModel
from casework.runtime import RunConfig
from casework.runtime.context import Caller, Role


def test_a_run_on_settings_names_its_models_and_traces_there(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    ana = Caller(3, "ana", Role.USER)
    config = RunConfig.of(settings, "ollama:big", caller=ana)
    assert config.traces == tmp_path / "home" / "traces"
    assert (config.models.name("judge"), config.models.name(LOCAL_ROLE)) == (
        "ollama:big",
        "local:qwen2.5-coder-1.5b",
    )
    assert (config.limits, config.events, config.caller) == (None, None, ana)
    plain = RunConfig.of(settings)
    assert plain.models.name("specialist") == settings.models.default


def test_events_go_to_the_sink_and_nowhere_without_one() -> None:
    config = RunConfig(models=RoleModels.given(ScriptedChatModel()))
    config.emit({"type": "step"})  # no sink: nothing happens
    heard: list[dict] = []
    heard_config = replace(config, events=heard.append, limits=Limits(max_model_calls=2))
    heard_config.emit({"type": "step", "node": "annotate"})
    assert heard == [{"type": "step", "node": "annotate"}]
    assert heard_config.limits is not None and heard_config.limits.max_model_calls == 2
    assert heard_config.traces is None
