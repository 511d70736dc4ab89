"""The public surface of the receipts app: every ``__all__`` name exists; APP is registered."""

from __future__ import annotations

import importlib

import pytest

from casework.registry import get_app

MODULES = [
    "agent",
    "api",
    "baseline",
    "cli",
    "dataset",
    "demo",
    "deps",
    "evalsuite",
    "evidence",
    "features",
    "harmonizer",
    "importer",
    "models",
    "places",
    "policy",
    "repository",
    "service",
    "strategies",
    "tables",
    "tools",
    "vectors",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist(name):
    module = importlib.import_module(f"casework.apps.receipts.{name}")
    assert module.__all__, name
    for attr in module.__all__:
        assert hasattr(module, attr), f"{name}.{attr}"


def test_app_is_registered():
    spec = get_app("receipts")
    assert spec.migrations is not None and (spec.migrations / "receipts_0001_initial.py").is_file()
    assert {c.name or c.callback.__name__ for c in spec.cli().registered_commands} >= {
        "import",
        "seed",
        "validate",
        "harmonize",
    }
    assert [r.path for r in spec.router().routes][:2] == ["/receipts", "/validate"]
    assert callable(spec.demo) and callable(spec.eval_suite)
    commands = {c.name or c.callback.__name__ for c in spec.cli().registered_commands}
    assert "evaluate" not in commands  # one evaluation path: `casework eval receipts`
    strategies = spec.strategies()
    assert list(strategies) == ["baseline", "agent"]
    assert dict(strategies) == dict(spec.eval_suite().strategies)
