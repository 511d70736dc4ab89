"""Who picks the model: over HTTP only the models the operator configured or allowlisted;
a ``replay:`` path (the server would open it) and an unconfigured provider (the operator's key
would pay) are refused in one sentence, 422."""

from __future__ import annotations

import pytest
from attack_helpers import make_served

from casework.apikit import chosen_model, offered_models
from casework.config import Models, ServerSettings, Settings
from casework.errors import InputError

VALIDATE = {"receipt": "nothing-here", "line_id": 1, "word_id": 1, "label": "TOTAL"}


def test_the_offered_models_are_the_configured_ones_and_the_allowlist(tmp_path):
    settings = Settings(
        home=tmp_path,
        models=Models(judge="openai:gpt-4o-mini", specialist="replay:/tmp/run"),
        server=ServerSettings(allowed_models=["anthropic:claude-haiku"]),
    )
    assert offered_models(settings) == {
        "local:qwen2.5-coder-1.5b",
        "openai:gpt-4o-mini",
        "anthropic:claude-haiku",
    }
    assert chosen_model(settings, " openai:gpt-4o-mini ") == "openai:gpt-4o-mini"
    assert chosen_model(settings, None) is None and chosen_model(settings, "") is None
    with pytest.raises(InputError, match=r"^Model 'replay:/tmp/run' is not offered"):
        chosen_model(settings, "replay:/tmp/run")  # configured for the CLI, never over HTTP


@pytest.mark.parametrize(
    "model",
    ["replay:/etc/passwd", "replay:../../home/.casework", "openai:gpt-4o", "ollama:llama3"],
)
def test_a_caller_cannot_name_a_model_the_operator_did_not_offer(tmp_path, model):
    served = make_served(tmp_path / "home")
    api = served.api()
    res = api.post("/receipts/validate", json=VALIDATE | {"model": model, "strategy": "agent"})
    assert res.status_code == 422
    assert res.json() == {
        "error": f"Model {model!r} is not offered by this server; choose one of: "
        "local:qwen2.5-coder-1.5b (the operator adds more to server.allowed_models).",
        "kind": "InputError",
    }
    hed = api.post(
        "/hed/annotate",
        json={"description": "A red circle appears.", "strategy": "rules"},
        headers={"X-Casework-Model": model},
    )
    assert hed.status_code == 422 and "is not offered by this server" in hed.json()["error"]


def test_an_allowlisted_model_passes_the_check(tmp_path):
    served = make_served(tmp_path / "home", server={"allowed_models": ["openai:gpt-4o-mini"]})
    res = served.api().post(
        "/receipts/validate", json=VALIDATE | {"model": "openai:gpt-4o-mini", "strategy": "rules"}
    )
    assert res.status_code == 404, res.text  # past the model check: the receipt is unknown
