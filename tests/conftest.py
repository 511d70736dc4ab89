"""Test-wide guards: no network but loopback, no real providers, a private casework home."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

from casework.config import default_model_dir, get_settings

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address) -> None:  # type: ignore[no-untyped-def]
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            ok = ipaddress.ip_address(host).is_loopback
        except ValueError:
            ok = host == "localhost"
        if not ok:
            raise OSError(f"tests may only reach loopback, not {host}")
    return _real_connect(self, address)


def _shared_model_dir() -> Path:
    """Where the bundled model is: an explicit CASEWORK_MODEL_PATH, else the shared cache,
    else the project's .casework/models when the model sits there."""
    from casework.llm.bundled import MODEL_FILE

    explicit = os.environ.get("CASEWORK_MODEL_PATH")
    if explicit:
        return Path(explicit)
    shared = default_model_dir()
    project = Path(__file__).resolve().parents[1] / ".casework" / "models"
    if not (shared / MODEL_FILE).is_file() and (project / MODEL_FILE).is_file():
        return project
    return shared


@pytest.fixture(autouse=True, scope="session")
def _guards(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("casework-home")
    mp.setenv("CASEWORK_HOME", str(home))
    mp.setenv("CASEWORK_ALLOW_NETWORK_MODELS", "false")
    mp.setenv("HF_HUB_OFFLINE", "1")
    mp.setenv("TRANSFORMERS_OFFLINE", "1")
    mp.setenv("ANONYMIZED_TELEMETRY", "False")
    # Tests share the one joined bundled model (the user's cache) rather than re-join 1 GB
    # into each temporary home; older checkouts kept it in the project's .casework/models.
    mp.setenv("CASEWORK_MODEL_PATH", str(_shared_model_dir()))
    # No prompt state carried from one test (or run) to the next; tests/llm/test_warm_starts
    # turns it on for its own copy of the model.
    mp.setenv("CASEWORK_MODEL_WARM_START", "0")
    mp.setattr(socket.socket, "connect", _loopback_only)
    get_settings.cache_clear()
    yield
    mp.undo()
    get_settings.cache_clear()


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """Settings on a fresh home directory for one test."""
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()
