"""The HTTP routes on a scripted model: validate, annotate, SSE progress, base64 images."""

from __future__ import annotations

import base64
import io
import json

from fastapi import FastAPI
from fastapi.testclient import TestClient
from PIL import Image

from casework.apikit import add_error_handler, current_caller
from casework.apps.hed.api import router
from casework.apps.hed.deps import HedDeps
from casework.config import get_settings
from casework.llm import RoleModels, ScriptedChatModel, call, say
from casework.runtime import RunConfig
from casework.runtime.context import Caller, Role
from casework.runtime.memory import Memory
from casework.stores import open_stores

GOOD = "Sensory-event, Visual-presentation, (Red, Circle)"
ANA = Caller(1, "ana", Role.USER)
BEA = Caller(2, "bea", Role.REVIEWER)


def responder(messages, tools):
    if tools:
        return call("FaithfulnessVerdict", faithful=True, feedback="")
    content = messages[-1].content
    if isinstance(content, list):  # the vision agent's image turn
        return say("A red circle on a black screen.")
    return say(GOOD)


def client(seen_models: list | None = None, caller: Caller = ANA) -> TestClient:
    model = ScriptedChatModel(responder=responder)

    def factory(choice):
        if seen_models is not None:
            seen_models.append(choice.model)
        deps = HedDeps(settings=get_settings(), validator="python")
        return deps, RunConfig(models=RoleModels.given(model))

    settings = get_settings()
    offered = settings.server.model_copy(update={"allowed_models": ["openrouter:some/model"]})
    app = FastAPI()
    app.state.settings = settings.model_copy(update={"server": offered})
    app.include_router(router(get_settings(), factory), prefix="/hed")
    app.dependency_overrides[current_caller] = lambda: caller
    add_error_handler(app)  # the server's error table
    return TestClient(app)


def test_validate_route() -> None:
    r = client().post("/hed/validate", json={"hed": ["Red", "Red, Blech"], "validator": "python"})
    assert r.status_code == 200
    assert [(x["valid"], [e["code"] for e in x["errors"]]) for x in r.json()] == [
        (True, []),
        (False, ["TAG_INVALID"]),
    ]
    bad = client().post("/hed/validate", json={"hed": ["Red"], "schema_version": "9.0.0"})
    assert bad.status_code == 422 and "Unknown HED schema version" in bad.json()["error"]
    assert bad.json()["kind"] == "InputError"


def test_annotate_reads_only_the_callers_own_verified_annotations(settings) -> None:
    # bea verified a description; ana's request for the same words must not read bea's memory
    # (the routes once ran without the caller, as the operator, who sees every example)
    description = "Three red dots appear on the screen."
    hers = "Sensory-event, Visual-presentation, (Red, Square), Computer-screen"
    memory = Memory(open_stores(get_settings()).engine, "hed", BEA)
    memory.add(
        description, {"description": description}, {"hed": hers}, verified_by="bea", source="api"
    )
    for caller, decided_by in ((BEA, "memory"), (ANA, "rules")):
        r = client(caller=caller).post("/hed/annotate", json={"description": description})
        assert r.status_code == 200, r.text
        assert r.json()["run"]["decided_by"] == decided_by
        assert (r.json()["annotation"] == hers) is (caller is BEA)


def test_annotate_route_and_model_header() -> None:
    seen: list = []
    r = client(seen).post(
        "/hed/annotate",
        json={"description": "A red circle appears.", "strategy": "loop"},
        headers={"X-Casework-Model": "openrouter:some/model"},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["verdict"], body["annotation"], body["run"]["strategy"]) == ("VALID", GOOD, "loop")
    assert seen == ["openrouter:some/model"]
    default = client().post("/hed/annotate", json={"description": "A red circle appears."})
    body = default.json()  # the default is the cascade, whose look-up is sure of this one
    assert (body["annotation"], body["run"]["strategy"], body["run"]["decided_by"]) == (
        "Sensory-event, Visual-presentation, Red, Circle",
        "cascade",
        "rules",
    )
    assert [(o["layer"], o["kept"], "output" in o) for o in body["run"]["layers"]] == [
        ("memory", False, False),  # no verified example yet: it answers at once, unsure
        ("memory-analogy", False, False),
        ("rules", True, False),
    ]
    empty = client().post("/hed/annotate", json={"description": ""})
    assert empty.status_code == 422 and "empty" in empty.json()["error"]


def _sse(text: str) -> list[tuple[str, dict]]:
    """(event, data) pairs of an SSE body."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_annotate_stream_reports_langgraph_events_then_the_result() -> None:
    with client().stream(
        "POST", "/hed/annotate/stream", json={"description": "A red circle.", "strategy": "loop"}
    ) as r:
        assert r.status_code == 200
        events = _sse("".join(r.iter_text()))
    assert [(e, d.get("node")) for e, d in events] == [
        ("model", "annotate"),
        ("step", "annotate"),
        ("step", "validate"),
        ("model", "evaluate"),
        ("step", "evaluate"),
        ("complete", None),
    ]
    assert events[0][1]["role"] == "annotator" and events[3][1]["role"] == "judge"
    assert events[2][1]["validation_status"] == "valid"
    done = events[-1][1]
    assert (done["annotation"], done["verdict"], done["is_faithful"]) == (GOOD, "VALID", True)
    assert [h["step"] for h in done["history"]] == ["validate", "evaluate"]
    assert done["run"]["usage"]["model_calls"] == 2


def test_annotate_stream_of_the_baseline_and_of_bad_input() -> None:
    with client().stream(
        "POST", "/hed/annotate/stream", json={"description": "A beep.", "strategy": "rules"}
    ) as r:
        events = _sse("".join(r.iter_text()))
    assert [e for e, _ in events] == ["complete"]
    assert events[0][1]["run"]["ended_by"] == "rules"
    bad = client().post("/hed/annotate/stream", json={"description": " "})
    assert bad.status_code == 422 and "empty" in bad.json()["error"]


def test_image_as_base64() -> None:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), (255, 0, 0)).save(buf, format="PNG")
    payload = {"image_base64": base64.b64encode(buf.getvalue()).decode()}
    r = client().post("/hed/annotate", json=payload)
    assert r.status_code == 200, r.text
    assert r.json()["image_description"] == "A red circle on a black screen."
    assert r.json()["description"] == "A red circle on a black screen."
    bad = client().post("/hed/annotate", json={"image_base64": "!!notbase64"})
    assert bad.status_code == 422 and "not valid base64" in bad.json()["error"]
    text = client().post(
        "/hed/annotate", json={"image_base64": base64.b64encode(b"hello").decode()}
    )
    assert text.status_code == 422 and "is not an image" in text.json()["error"]


def test_a_model_failing_mid_run_is_a_502_with_the_state_reached() -> None:
    def broken(messages):
        raise ConnectionError("provider unreachable")

    model = ScriptedChatModel(steps=[say("Sensory-event, (Red, Cirle)"), broken])

    def factory(choice):
        deps = HedDeps(settings=get_settings(), validator="python")
        return deps, RunConfig(models=RoleModels.given(model))

    app = FastAPI()
    app.state.settings = get_settings()
    app.include_router(router(get_settings(), factory), prefix="/hed")
    app.dependency_overrides[current_caller] = lambda: Caller(1, "ana", Role.USER)
    add_error_handler(app)  # the server's error table
    r = TestClient(app).post(
        "/hed/annotate", json={"description": "A red circle.", "strategy": "loop"}
    )
    assert r.status_code == 502
    body = r.json()
    assert body["kind"] == "ModelError" and body["error"].startswith(
        "The model failed mid-run (ConnectionError: provider unreachable)"
    )
    result = body["result"]
    assert (result["run"]["ended_by"], result["validation_status"]) == ("error:model", "invalid")
    assert result["validation_errors"][0].startswith("TAG_INVALID")
