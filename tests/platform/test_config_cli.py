"""Settings precedence and the CLI's contract: JSON where asked, one sentence on errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from casework.config import Settings, config_sources, get_settings
from casework.errors import ConfigError
from casework.llm.bundled import MODEL_FILE


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


def test_doctor_prints_each_failure_once_and_exits_1_through_a_pipe(tmp_path):
    (tmp_path / "a-file").write_text("not a directory")
    # capture_output: stdout and stderr are pipes, not a terminal
    out = cli(
        "doctor",
        env={
            "CASEWORK_MODEL_PATH": str(tmp_path / "nowhere"),
            "CASEWORK_DATABASE_URL": f"sqlite:///{tmp_path}/a-file/casework.db",
        },
    )
    assert out.returncode == 1
    both = out.stdout + out.stderr
    assert "Traceback" not in both and "\x1b" not in both
    lines = out.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["FAIL", "bundled"],
        ["skip", "llama.cpp"],
        ["FAIL", "database"],
        ["ok", "vector"],
        ["ok", "checkpointer"],
        ["info", "provider"],
    ]
    assert lines[0] == (
        f"FAIL bundled model   not prepared at {tmp_path}/nowhere/{MODEL_FILE}: run `make model`"
    )
    assert lines[1] == "skip llama.cpp       needs the bundled model"
    assert lines[2].startswith(f"FAIL database        cannot open sqlite:///{tmp_path}/a-file/")
    assert lines[2].endswith(
        "a-file is a file, not a folder; move it aside, or set CASEWORK_HOME (or "
        "CASEWORK_DATABASE_URL) to another place."
    )
    assert both.count("bundled model   not prepared") == 1 and both.count("FAIL database") == 1
    assert out.stderr == ""


def test_doctor_checks_are_skipped_after_a_failed_prerequisite(tmp_path):
    from rich.console import Console

    from casework.doctor import run_doctor

    settings = Settings(home=tmp_path, model_path=tmp_path / "none")
    console = Console(file=io.StringIO(), width=200)
    checks = run_doctor(console, settings)
    assert [(c.name, c.status) for c in checks][:3] == [
        ("bundled model", "fail"),
        ("llama.cpp", "skip"),
        ("database", "ok"),
    ]


def test_unknown_model_provider_is_one_sentence():
    from casework.llm import resolve_model

    with pytest.raises(ConfigError, match="Unknown model provider 'foo'"):
        resolve_model("foo:bar")


def test_bench_runtime_json():
    out = cli("bench", "runtime", "--json", "--steps", "20", "--repeats", "1")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["steps"] == 20 and data["casework_ms_per_step"] > 0 and "ratio_vs_bare" in data


def test_the_model_lives_in_one_shared_cache_whatever_the_home(tmp_path, monkeypatch):
    monkeypatch.delenv("CASEWORK_MODEL_PATH")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    a = Settings(home=tmp_path / "a").models_dir
    b = Settings(home=tmp_path / "b").models_dir
    assert a == b == tmp_path / "xdg" / "casework" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert Settings().models_dir == tmp_path / "user" / ".cache" / "casework" / "models"
    monkeypatch.setenv("CASEWORK_MODEL_PATH", str(tmp_path / "mine"))
    assert Settings().models_dir == tmp_path / "mine"
    sources = {k: (v, src) for k, v, src in config_sources(Settings())}
    assert sources["(effective) model path"] == (tmp_path / "mine", "derived")
