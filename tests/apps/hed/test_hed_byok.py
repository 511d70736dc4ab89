"""Providers per request: headers choose the model and carry the caller's own key (BYOK),
which reaches the provider and nothing else: not the response, the trace, the logs or the
database. The provider is an OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from casework.apikit import add_error_handler, current_caller
from casework.apps.hed.api import router
from casework.config import ServerSettings, Settings
from casework.runtime.context import Caller, Role

GOOD = "Sensory-event, Visual-presentation, (Red, Circle)"
KEY = "sk-or-byok-7f3a9c21e5d84b6f"


def _offering(tmp_path: Path) -> Settings:
    """Settings whose operator offers the headers' models over HTTP (server.allowed_models)."""
    offered = ServerSettings(allowed_models=["openrouter:acme/small", "acme:x"])
    return Settings(home=tmp_path / "home", allow_network_models=True, server=offered)


class _Provider(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: answers GOOD, as one JSON body or as SSE chunks."""

    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"auth": self.headers.get("Authorization"), "body": body})
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for piece in (GOOD[:13], GOOD[13:]):
                chunk = {
                    "id": "c1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
            return
        answer = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": GOOD},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:  # quiet
        pass


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENROUTER_BASE_URL", f"http://127.0.0.1:{server.server_port}/v1")
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)  # only the header has a key
    _Provider.seen = []
    yield _Provider.seen
    server.shutdown()
    server.server_close()


def test_the_key_in_a_header_reaches_the_provider_and_nothing_else(
    provider: list[dict[str, Any]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = _offering(tmp_path)
    app = FastAPI()
    app.state.settings = settings
    app.dependency_overrides[current_caller] = lambda: Caller(1, "ana", Role.USER)
    app.include_router(router(settings), prefix="/hed")
    add_error_handler(app)  # the server's error table
    client = TestClient(app)
    headers = {"X-Casework-Model": "openrouter:acme/small", "X-Casework-Api-Key": KEY}
    body = {"description": "A red circle appears.", "strategy": "loop-no-eval"}
    for name in ("openai", "httpx", "httpcore", "casework", "langchain", "langgraph"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    with caplog.at_level(logging.DEBUG):
        plain = client.post("/hed/annotate", json=body, headers=headers)
        with client.stream("POST", "/hed/annotate/stream", json=body, headers=headers) as r:
            streamed = "".join(r.iter_text())
    assert plain.status_code == 200, plain.text
    assert (
        plain.json()["annotation"] == GOOD
        and plain.json()["run"]["model"] == "openrouter:acme/small"
    )
    assert "event: token" in streamed and "event: complete" in streamed
    # The provider got the caller's key, on both requests, for the model the header named.
    assert [(s["auth"], s["body"]["model"]) for s in provider] == [
        (f"Bearer {KEY}", "acme/small")
    ] * 2
    # ...and nothing we keep or print has it.
    traces = list((settings.home / "traces").glob("hed-*.jsonl"))
    assert len(traces) == 2 and all(GOOD in t.read_text() for t in traces)
    assert all(KEY not in t.read_text() for t in traces)
    assert KEY not in plain.text and KEY not in streamed
    assert caplog.records and KEY not in caplog.text
    stored = b"".join(p.read_bytes() for p in settings.home.rglob("*") if p.is_file())
    assert KEY.encode() not in stored


def test_model_header_errors_are_one_sentence(tmp_path: Path) -> None:
    settings = _offering(tmp_path)
    app = FastAPI()
    app.state.settings = settings
    app.dependency_overrides[current_caller] = lambda: Caller(1, "ana", Role.USER)
    app.include_router(router(settings), prefix="/hed")
    add_error_handler(app)  # the server's error table
    client = TestClient(app)
    body = {"description": "A red circle appears."}
    no_model = client.post("/hed/annotate", json=body, headers={"X-Casework-Api-Key": KEY})
    assert no_model.status_code == 422
    assert no_model.json()["error"].startswith("A provider key needs the model it is for")
    local = client.post(
        "/hed/annotate",
        json=body,
        headers={"X-Casework-Model": "local:qwen2.5-coder-1.5b", "X-Casework-Api-Key": KEY},
    )
    assert local.status_code == 400 and "local models take no API key" in local.json()["error"]
    assert local.json()["kind"] == "ConfigError"
    unknown = client.post("/hed/annotate", json=body, headers={"X-Casework-Model": "acme:x"})
    assert unknown.status_code == 400 and "Unknown model provider 'acme'" in unknown.text
    assert KEY not in no_model.text + local.text


def test_the_key_goes_to_the_named_provider_only(tmp_path: Path) -> None:
    from casework.llm import RoleModels

    settings = Settings(home=tmp_path / "home", allow_network_models=True)
    same = RoleModels(
        settings, "openrouter:acme/small", vision="openrouter:acme/vision", api_key=KEY
    )
    assert same("annotator").openai_api_key.get_secret_value() == KEY  # type: ignore[attr-defined]
    assert same("vision").openai_api_key.get_secret_value() == KEY  # type: ignore[attr-defined]
    other = RoleModels(settings, "openrouter:acme/small", vision="ollama:llava", api_key=KEY)
    assert type(other("vision")).__name__ == "ChatOllama"  # built without the key
    assert KEY not in repr(other) and KEY not in repr(same)
