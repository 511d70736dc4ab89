"""The HTTP routes on a scripted model: validate, annotate, SSE progress, base64 images."""

from __future__ import annotations

import base64
import io
import json

from fastapi import FastAPI
from fastapi.testclient import TestClient
from PIL import Image

from casework.apps.hed.api import router
from casework.apps.hed.deps import HedDeps
from casework.config import get_settings
from casework.llm import ScriptedChatModel, call, say

GOOD = "Sensory-event, Visual-presentation, (Red, Circle)"


def responder(messages, tools):
    if tools:
        return call("FaithfulnessVerdict", faithful=True, feedback="")
    content = messages[-1].content
    if isinstance(content, list):  # the vision agent's image turn
        return say("A red circle on a black screen.")
    return say(GOOD)


def client(seen_models: list | None = None) -> TestClient:
    model = ScriptedChatModel(responder=responder)

    def factory(override):
        if seen_models is not None:
            seen_models.append(override)
        return HedDeps(settings=get_settings(), models=lambda role: model, validator="python")

    app = FastAPI()
    app.include_router(router(factory), prefix="/hed")
    return TestClient(app)


def test_validate_route() -> None:
    r = client().post("/hed/validate", json={"hed": ["Red", "Red, Blech"], "validator": "python"})
    assert r.status_code == 200
    assert [(x["valid"], [e["code"] for e in x["errors"]]) for x in r.json()] == [
        (True, []),
        (False, ["TAG_INVALID"]),
    ]
    bad = client().post("/hed/validate", json={"hed": ["Red"], "schema_version": "9.0.0"})
    assert bad.status_code == 422 and "Unknown HED schema version" in bad.json()["detail"]


def test_annotate_route_and_model_header() -> None:
    seen: list = []
    r = client(seen).post(
        "/hed/annotate",
        json={"description": "A red circle appears."},
        headers={"X-Casework-Model": "openrouter:some/model"},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["verdict"], body["annotation"], body["run"]["strategy"]) == ("VALID", GOOD, "loop")
    assert seen == ["openrouter:some/model"]
    empty = client().post("/hed/annotate", json={"description": ""})
    assert empty.status_code == 422 and "empty" in empty.json()["detail"]


def test_annotate_stream_reports_each_node_then_the_result() -> None:
    with client().stream(
        "POST", "/hed/annotate/stream", json={"description": "A red circle."}
    ) as r:
        assert r.status_code == 200
        text = "".join(r.iter_text())
    events = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("event: ")]
    assert events == ["step", "step", "step", "complete"]
    data = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert [d.get("node") for d in data[:3]] == ["annotate", "validate", "evaluate"]
    assert data[1]["validation_status"] == "valid" and data[-1]["annotation"] == GOOD


def test_image_as_base64() -> None:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), (255, 0, 0)).save(buf, format="PNG")
    payload = {"image_base64": base64.b64encode(buf.getvalue()).decode()}
    r = client().post("/hed/annotate", json=payload)
    assert r.status_code == 200, r.text
    assert r.json()["image_description"] == "A red circle on a black screen."
    assert r.json()["description"] == "A red circle on a black screen."
    bad = client().post("/hed/annotate", json={"image_base64": "!!notbase64"})
    assert bad.status_code == 422 and "not valid base64" in bad.json()["detail"]
    text = client().post(
        "/hed/annotate", json={"image_base64": base64.b64encode(b"hello").decode()}
    )
    assert text.status_code == 422 and "is not an image" in text.json()["detail"]
