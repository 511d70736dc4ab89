"""Settings precedence and the CLI's contract: JSON where asked, one sentence on errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from casework.config import Settings, config_sources, get_settings
from casework.errors import ConfigError


def cli(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "casework.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_env_beats_toml_beats_default(tmp_path, monkeypatch):
    toml = tmp_path / "casework.toml"
    toml.write_text(
        '[models]\ndefault = "ollama:llama3"\njudge = "openai:gpt-4o-mini"\n[limits]\nmax_model_calls = 7\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CASEWORK_MODELS__JUDGE", "anthropic:claude-3-5-haiku")
    s = Settings()
    assert s.models.default == "ollama:llama3" and s.models.judge == "anthropic:claude-3-5-haiku"
    assert s.models.for_role("orchestrator") == "ollama:llama3" and s.limits.max_model_calls == 7
    sources = {k: src for k, _, src in config_sources(s)}
    assert sources["models.judge"] == "env CASEWORK_MODELS__JUDGE"
    assert sources["models.default"].startswith("file ")
    assert sources["limits.max_tool_calls"] == "default"


def test_bad_config_path_is_a_config_error(monkeypatch, tmp_path):
    monkeypatch.setenv("CASEWORK_CONFIG", str(tmp_path / "missing.toml"))
    get_settings.cache_clear()
    with pytest.raises(ConfigError, match="not a file"):
        get_settings()
    get_settings.cache_clear()


def test_config_json_names_sources(tmp_path):
    out = cli("config", "--json", env={"CASEWORK_LIMITS__MAX_TOOL_CALLS": "9"})
    assert out.returncode == 0, out.stderr
    rows = {r["key"]: r for r in json.loads(out.stdout)}
    assert rows["limits.max_tool_calls"] == {
        "key": "limits.max_tool_calls",
        "value": 9,
        "source": "env CASEWORK_LIMITS__MAX_TOOL_CALLS",
    }


def test_doctor_fails_in_one_sentence_on_a_missing_model(tmp_path):
    out = cli("doctor", env={"CASEWORK_MODEL_PATH": str(tmp_path / "nowhere")})
    assert out.returncode == 2
    assert "FAIL bundled model" in out.stdout
    err = out.stderr.strip()
    assert err.startswith("error: bundled model is broken") and "Traceback" not in out.stderr
    assert len(err.splitlines()) <= 2


def test_unknown_model_provider_is_one_sentence():
    from casework.llm import resolve_model

    with pytest.raises(ConfigError, match="Unknown model provider 'foo'"):
        resolve_model("foo:bar")


def test_bench_runtime_json():
    out = cli("bench", "runtime", "--json", "--steps", "20", "--repeats", "1")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["steps"] == 20 and data["casework_ms_per_step"] > 0 and "ratio_vs_bare" in data
