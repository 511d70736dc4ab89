"""Fixtures of the harness's tests: a fresh casework home, and the toy app of ``evals_toy``."""

from __future__ import annotations

from pathlib import Path

import pytest
from evals_toy import make_cases, make_suite, write_dataset

from casework.config import get_settings
from casework.evals.suite import EvalSuite


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Settings with a fresh home (database, runs) under tmp_path and no network models."""
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CASEWORK_ALLOW_NETWORK_MODELS", "false")
    monkeypatch.delenv("CASEWORK_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "toy.jsonl", make_cases())


@pytest.fixture
def suite(dataset: Path) -> EvalSuite:
    return make_suite(dataset)
