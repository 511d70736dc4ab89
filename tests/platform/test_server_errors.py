"""create_app's error answers (the one table of casework.apikit, never a traceback) and SSE
streams that fail."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient

from casework.errors import ConfigError, InputError, ModelError, NotFoundError
from casework.runtime.context import PermissionDenied
from casework.runtime.events import Event
from casework.server import create_app, sse_response


def _client() -> TestClient:
    app = create_app()
    router = APIRouter()

    @router.get("/raise/{kind}")
    def raise_(kind: str) -> dict[str, str]:
        errors = {
            "input": InputError("Label 'x' is not an upper-case label name."),
            "missing": NotFoundError("No receipt 'nowhere'."),
            "config": ConfigError("Set CASEWORK_DATABASE_URL to a reachable database."),
            "model": ModelError("The model answered no JSON; try again."),
            "denied": PermissionDenied("Only a reviewer changes shared labels."),
            "bug": RuntimeError("secret internals /etc/passwd"),
        }
        raise errors[kind]

    @router.get("/count")
    def count(n: int) -> dict[str, int]:
        return {"n": n}

    @router.get("/stream/{how}")
    def stream(how: str):
        def events() -> Iterator[Event]:
            yield {"type": "text", "text": "thinking", "node": "model"}
            if how == "input":
                raise InputError("The word moved; rebuild the dataset.")
            if how == "bug":
                raise KeyError("internal")
            yield {"type": "tool_result", "tool": "lookup", "output": "42", "ok": True, "id": "c1"}

        return sse_response(events())

    app.include_router(router, prefix="/t")
    return TestClient(app, raise_server_exceptions=False)


def _events(body: str) -> list[tuple[str, dict]]:
    names = [
        ln.removeprefix("event: ").strip() for ln in body.splitlines() if ln.startswith("event:")
    ]
    data = [
        json.loads(ln.removeprefix("data: ")) for ln in body.splitlines() if ln.startswith("data:")
    ]
    return list(zip(names, data, strict=True))


@pytest.mark.parametrize(
    ("kind", "status", "body"),
    [
        (
            "input",
            422,
            {"error": "Label 'x' is not an upper-case label name.", "kind": "InputError"},
        ),
        ("missing", 404, {"error": "No receipt 'nowhere'.", "kind": "NotFoundError"}),
        (
            "config",
            400,
            {"error": "Set CASEWORK_DATABASE_URL to a reachable database.", "kind": "ConfigError"},
        ),
        (
            "model",
            502,
            {"error": "The model answered no JSON; try again.", "kind": "ModelError"},
        ),
        (
            "denied",
            403,
            {"error": "Only a reviewer changes shared labels.", "kind": "PermissionDenied"},
        ),
        (
            "bug",
            500,
            {
                "error": "Internal error (RuntimeError); see the server log.",
                "kind": "InternalError",
            },
        ),
    ],
)
def test_errors_map_to_status_and_one_sentence(kind, status, body):
    res = _client().get(f"/t/raise/{kind}")
    assert (res.status_code, res.json()) == (status, body)
    assert "Traceback" not in res.text and "/etc/passwd" not in res.text


def test_request_validation_is_422_naming_the_field():
    res = _client().get("/t/count", params={"n": "many"})
    assert res.status_code == 422
    assert [(d["loc"], d["type"]) for d in res.json()["detail"]] == [
        (["query", "n"], "int_parsing")
    ]
    assert _client().get("/t/count").json()["detail"][0]["type"] == "missing"
    assert _client().get("/t/count", params={"n": "3"}).json() == {"n": 3}


def test_unknown_route_is_404():
    res = _client().get("/t/nowhere")
    assert (res.status_code, res.json()) == (404, {"detail": "Not Found"})


def test_sse_stream_in_order():
    res = _client().get("/t/stream/ok")
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/event-stream")
    assert _events(res.text) == [
        ("text", {"type": "text", "text": "thinking", "node": "model"}),
        (
            "tool_result",
            {"type": "tool_result", "tool": "lookup", "output": "42", "ok": True, "id": "c1"},
        ),
    ]


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("input", "The word moved; rebuild the dataset."),
        ("bug", "Internal error (KeyError); see the server log."),
    ],
)
def test_sse_failure_mid_stream_ends_with_an_error_event(how, message):
    res = _client().get(f"/t/stream/{how}")
    assert res.status_code == 200
    assert _events(res.text) == [
        ("text", {"type": "text", "text": "thinking", "node": "model"}),
        ("error", {"error": message}),
    ]
