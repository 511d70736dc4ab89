"""The receipts cascade and its model layer (the bundled model's label choice), with scripted
models; one bundled-model test end to end (slow)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, cast

import pytest

from casework.apps.receipts.classify import NONE_LABEL, candidate_labels, label_messages
from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.models import LABEL_DEFINITIONS, LabelInput
from casework.apps.receipts.strategies import cascade, choice
from casework.llm import RoleModels
from casework.llm.choice import ScriptedChooser
from casework.llm.roles import LOCAL_ROLE
from casework.llm.scripted import ScriptedChatModel, call
from casework.runtime import RunConfig
from casework.runtime.cascade import (
    CascadePolicy,
    LayerPolicy,
    cascade_path,
    save_policy,
)

# bluebottle line 7 word 1 is the date "05/02/2026" (see test_local_model.py)
DATE_WORD = LabelInput(receipt="bluebottle", line_id=7, word_id=1, suggested_label="DATE")
DATE_AS_TIME = LabelInput(receipt="bluebottle", line_id=7, word_id=1, suggested_label="TIME")


def _scores(winner: str, p: float = 0.9) -> dict[str, float]:
    """A score table over every label: ``winner`` at ``p``, the rest sharing 1 - p."""
    options = [*LABEL_DEFINITIONS, NONE_LABEL]
    rest = (1 - p) / (len(options) - 1)
    return {o: math.log(p if o == winner else rest) for o in options}


def _run(**roles: Any) -> RunConfig:
    """A run config answering only ``roles`` (role -> model)."""

    def models(role: str) -> Any:
        if role not in roles:
            raise AssertionError(f"role {role!r} was not expected")
        return roles[role]

    return RunConfig(models=RoleModels.given(models))


def test_candidates_are_the_labels_the_shape_allows() -> None:
    labels = candidate_labels("TIME", "date")
    assert labels[-1] == NONE_LABEL and "TIME" in labels and "DATE" in labels
    assert "GRAND_TOTAL" not in labels and "PHONE_NUMBER" not in labels


def test_the_content_free_prompt_says_nothing_of_a_receipt() -> None:
    system, user = label_messages(None)
    assert "PRODUCT_NAME:" in str(system.content)
    assert "Word: N/A" in str(user.content) and "Merchant: N/A" in str(user.content)


def test_choice_is_valid_when_the_suggested_label_wins(seeded: ReceiptsDeps) -> None:
    chooser = ScriptedChooser(_scores("DATE", 0.95))
    config = replace(_run(**{LOCAL_ROLE: chooser}), traces=seeded.settings.traces_dir)
    decision = choice(DATE_WORD, seeded, config)
    # 0.95 against 0.0025 for each other label the date shape allows, renormalised
    others = len(candidate_labels("DATE", "date")) - 1
    assert decision.verdict == "VALID"
    assert decision.confidence == pytest.approx(100 * 0.95 / (0.95 + 0.0025 * others), abs=0.01)
    assert decision.run is not None and decision.run.usage.model_calls == 1
    asked = str(chooser.calls[0][0][1].content)
    assert "Word: 05/02/2026" in asked and "> " in asked
    similar = asked.split("Similar words on other receipts and their labels:\n")[1]
    assert similar.count(" -> ") == 6 and "-> DATE" in similar  # dates on other receipts
    assert decision.evidence[0].source == "label_choice"
    # one harness run: the scored call counted, the choice traced, the end typed
    from casework.runtime import EndReason
    from casework.runtime.traces import read_trace

    assert (decision.run.ended_by, decision.run.strategy) == (EndReason.SUBMIT, "choice")
    records = read_trace(decision.run.trace_path)
    assert [r["type"] for r in records] == ["run_start", "run_end"]
    assert records[0]["agent"] == "receipts_choice" and records[0]["model"] == decision.run.model
    assert records[-1]["result"]["verdict"] == "VALID"


def test_cascade_rules_decide_what_they_are_sure_of_and_the_model_is_not_asked(
    seeded: ReceiptsDeps, tmp_path: Any
) -> None:
    # a date-shaped word suggested as TIME: the rules say INVALID with confidence 85+
    chooser = ScriptedChooser()  # would fail if asked
    config = _run(**{LOCAL_ROLE: chooser, "specialist": cast(Any, object())})
    policy = CascadePolicy(
        {"rules": LayerPolicy(80.0), "baseline": LayerPolicy(80.0), "choice": LayerPolicy(80.0)}
    )
    home = seeded.settings.home
    path = cascade_path(home, "receipts", None)
    save_policy(policy, path)
    try:
        decision = cascade(DATE_AS_TIME, seeded, config)
    finally:
        path.unlink()
    assert decision.verdict == "INVALID" and decision.run is not None
    assert decision.run.decided_by == "rules" and chooser.calls == []
    assert [o.layer for o in decision.run.layers] == ["memory", "rules"]


def test_cascade_passes_an_unsure_word_to_the_model_then_to_the_remote_agent(
    seeded: ReceiptsDeps,
) -> None:
    # no layer is allowed to decide below 101 except the remote agent
    never = LayerPolicy(101.0)
    policy = CascadePolicy(
        {"rules": never, "baseline": never, "choice": never, "agent": LayerPolicy(50.0)}
    )
    chooser = ScriptedChooser(_scores("DATE"))
    remote = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call(
                "submit_decision",
                verdict="VALID",
                confidence=90,
                reasoning="It is the date.",
                evidence=[],
            ),
        ]
    )
    config = _run(**{LOCAL_ROLE: chooser, "specialist": remote})
    path = cascade_path(seeded.settings.home, "receipts", "scripted")
    save_policy(policy, path)
    try:
        decision = cascade(DATE_WORD, seeded, config)
    finally:
        path.unlink()
    run = decision.run
    assert run is not None and decision.verdict == "VALID"
    assert [o.layer for o in run.layers] == ["memory", "rules", "baseline", "choice", "agent"]
    assert (
        run.decided_by == "agent" and run.layers[-1].remote and run.layers[-1].model == "scripted"
    )
    assert run.usage.model_calls == 1 + 2  # the choice, then the agent's two turns


def test_cascade_with_nobody_sure_is_needs_review_and_says_what_each_layer_said(
    seeded: ReceiptsDeps,
) -> None:
    never = LayerPolicy(101.0)
    policy = CascadePolicy({"rules": never, "baseline": never, "choice": never})
    chooser = ScriptedChooser(_scores("DATE"))
    path = cascade_path(seeded.settings.home, "receipts", None)
    save_policy(policy, path)
    try:
        # the specialist is the local model: no remote layer
        decision = cascade(DATE_WORD, seeded, _run(**{LOCAL_ROLE: chooser, "specialist": _local()}))
    finally:
        path.unlink()
    assert decision.verdict == "NEEDS_REVIEW" and decision.run is not None
    assert decision.run.decided_by is None
    assert [o.layer for o in decision.run.layers] == ["memory", "rules", "baseline", "choice"]
    assert "choice VALID" in decision.reasoning and "(needs 101.0)" in decision.reasoning


def _local() -> Any:
    from pathlib import Path

    from casework.llm.local import LocalChatModel

    return LocalChatModel(model_path=Path("/nonexistent.gguf"))


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_chooses_the_label_of_a_date(seeded: ReceiptsDeps) -> None:
    pytest.importorskip("xllamacpp")
    config = RunConfig.of(seeded.settings)
    valid = choice(DATE_WORD, seeded, config)
    wrong = choice(DATE_AS_TIME, seeded, config)
    assert valid.raw_verdict == "VALID" and wrong.raw_verdict == "INVALID"
    probabilities = valid.evidence[0].fields
    assert max(probabilities, key=probabilities.get) == "DATE"
    assert valid.run is not None and valid.run.model == "local:qwen2.5-coder-1.5b"


def test_with_the_bias_correction_on_the_content_free_prompt_is_scored_first(
    seeded: ReceiptsDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casework.apps.receipts import classify

    monkeypatch.setattr(classify, "CORRECT_BIAS", True)
    # the model says DATE to anything at 0.9: divided out, TIME wins at 0.05 / 0.005
    biased = _scores("DATE", 0.9)
    case = _scores("DATE", 0.5) | {"TIME": math.log(0.4)}
    chooser = ScriptedChooser(biased, case)
    decision = choice(DATE_AS_TIME, seeded, _run(**{LOCAL_ROLE: chooser}))
    assert "Word: N/A" in str(chooser.calls[0][0][1].content)
    assert decision.raw_verdict == "VALID"  # TIME, the suggested label, won after the division


def test_the_shipped_thresholds_stand_until_a_user_fits_their_own(seeded: ReceiptsDeps) -> None:
    from casework.apps.receipts.strategies import SHIPPED_POLICY

    config = _run(specialist=_local())
    shipped = cascade.policy(seeded, config)
    assert shipped.source == "receipts-20261124-221701-6b82" and shipped.target == 0.9
    assert shipped.layers["choice"].for_verdict("VALID").threshold == 80.0951
    path = save_policy(
        CascadePolicy({"rules": LayerPolicy(99.0)}),
        cascade_path(seeded.settings.home, "receipts", None),
    )
    try:
        assert cascade.policy(seeded, config).layers["rules"].threshold == 99.0
    finally:
        path.unlink()
    assert SHIPPED_POLICY.is_file()
