"""The cascade: the cheapest sure layer decides; fitting, simulation and the curve."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from casework.errors import ConfigError
from casework.llm import RoleModels, ScriptedChatModel
from casework.runtime.calibration import Calibration
from casework.runtime.cascade import (
    NEVER,
    Cascade,
    CascadePolicy,
    Layer,
    LayerOutcome,
    LayerPolicy,
    cascade_path,
    load_policy,
    save_policy,
)
from casework.runtime.cascade_fit import (
    fit_policy,
    fit_policy_for_budget,
    model_layers,
    simulate,
    sweep,
)
from casework.runtime.decision import Decision, EndReason, RunInfo
from casework.runtime.runconfig import RunConfig
from casework.runtime.usage import Usage

CONFIG = RunConfig(models=RoleModels.given(ScriptedChatModel()))
"""No layer here asks for a model."""


def _layer(
    name: str, table: dict[str, tuple[str, float]], calls: list[str], model_calls: int = 0
) -> Layer:
    def run(input: str, deps: object, config: RunConfig) -> Decision:
        calls.append(name)
        verdict, confidence = table[input]
        return Decision(
            verdict=verdict,
            confidence=confidence,
            reasoning=f"{name} says {verdict}",
            run=RunInfo(
                ended_by=EndReason.RULES if not model_calls else EndReason.SUBMIT,
                strategy=name,
                model="m" if model_calls else None,
                usage=Usage(
                    model_calls=model_calls,
                    input_tokens=10 * model_calls,
                    wall_seconds=1.0 + model_calls,
                ),
            ),
        )

    return Layer(name, run)


class _Deps:
    """What a cascade reads of an app's deps: ``settings.home``, where its policy is stored."""

    def __init__(self, home: Path) -> None:
        self.settings = SimpleNamespace(home=home)


@pytest.fixture
def deps(tmp_path: Path) -> _Deps:
    return _Deps(tmp_path)


def _cascade(
    calls: list[str],
    policy: CascadePolicy | None = None,
    explore: bool = False,
    home: Path | None = None,
) -> Cascade:
    rules = _layer(
        "rules", {"a": ("VALID", 90), "b": ("NEEDS_REVIEW", 50), "c": ("INVALID", 60)}, calls
    )
    model = _layer(
        "model",
        {"a": ("VALID", 99), "b": ("INVALID", 95), "c": ("VALID", 40)},
        calls,
        model_calls=1,
    )
    if policy is not None and home is not None:
        save_policy(policy, cascade_path(home, "toy", None))
    c = Cascade("toy", [rules, model], decision=Decision)
    return c.exploring() if explore else c


def test_the_first_sure_layer_decides_and_later_layers_do_not_run(deps: _Deps) -> None:
    calls: list[str] = []
    decision = _cascade(calls)("a", deps, CONFIG)
    assert decision.verdict == "VALID" and calls == ["rules"]
    assert decision.run is not None and decision.run.decided_by == "rules"
    assert decision.run.strategy == "cascade" and decision.run.usage.model_calls == 0
    assert [o.layer for o in decision.run.layers] == ["rules"]


def test_an_undecided_or_unsure_layer_passes_the_case_on(deps: _Deps) -> None:
    calls: list[str] = []
    decision = _cascade(calls)("b", deps, CONFIG)  # rules NEEDS_REVIEW -> model INVALID 95
    assert (decision.verdict, calls) == ("INVALID", ["rules", "model"])
    run = decision.run
    assert run is not None and run.decided_by == "model" and run.model == "m"
    assert [(o.layer, o.kept) for o in run.layers] == [("rules", False), ("model", True)]
    assert run.usage.model_calls == 1 and run.usage.wall_seconds == pytest.approx(3.0)


def test_no_sure_layer_marks_the_last_answer_for_review(deps: _Deps) -> None:
    calls: list[str] = []
    decision = _cascade(calls)("c", deps, CONFIG)  # rules INVALID 60 < 80; model VALID 40 < 80
    assert decision.verdict == "NEEDS_REVIEW" and decision.confidence == 40
    assert decision.reasoning == (
        "No layer was sure: rules INVALID at 60.0 (needs 80.0); model VALID at 40.0 (needs 80.0)."
    )
    assert decision.run is not None and decision.run.decided_by is None
    assert decision.run.ended_by == EndReason.SUBMIT  # how the reviewed answer's run ended
    assert [o.verdict for o in decision.run.layers] == ["INVALID", "VALID"]


def test_thresholds_act_on_the_stored_policys_calibrated_confidence(deps: _Deps) -> None:
    # rules stated 60 on "c"; its calibration says such answers are right 90 % of the time
    cal = Calibration(knots=(50.0, 60.0, 90.0), values=(20.0, 90.0, 95.0), n=30)
    policy = CascadePolicy({"rules": LayerPolicy(85.0, cal), "model": LayerPolicy(80.0)})
    calls: list[str] = []
    decision = _cascade(calls, policy, home=deps.settings.home)("c", deps, CONFIG)
    assert decision.verdict == "INVALID" and calls == ["rules"]
    assert decision.run is not None and decision.run.layers[0].calibrated == 90.0


def test_exploring_runs_every_layer_but_pays_only_up_to_the_decider(deps: _Deps) -> None:
    calls: list[str] = []
    decision = _cascade(calls, explore=True)("a", deps, CONFIG)
    assert calls == ["rules", "model"] and decision.verdict == "VALID"
    run = decision.run
    assert run is not None and run.decided_by == "rules" and run.usage.model_calls == 0
    assert [o.kept for o in run.layers] == [True, False]


def test_a_layer_that_cannot_answer_is_recorded_and_skipped(deps: _Deps) -> None:
    def broken(input: str, deps: object, config: RunConfig) -> Decision:
        raise ConfigError("no model configured")

    calls: list[str] = []
    model = _layer("model", {"a": ("VALID", 99)}, calls, model_calls=1)
    c = Cascade("c", [Layer("remote", broken), model], decision=Decision)
    decision = c("a", deps, CONFIG)
    assert decision.verdict == "VALID" and decision.run is not None
    assert decision.run.layers[0].error == "ConfigError: no model configured"


def test_when_every_layer_fails_the_no_answer_is_a_bare_needs_review(deps: _Deps) -> None:
    def broken(input: str, deps: object, config: RunConfig) -> Decision:
        raise ConfigError("no model configured")

    decision = Cascade("c", [Layer("rules", broken)], decision=Decision)("a", deps, CONFIG)
    assert (decision.verdict, decision.confidence) == ("NEEDS_REVIEW", 0)
    assert decision.run is not None and decision.run.ended_by == EndReason.NO_DECISION
    assert (
        decision.reasoning
        == "No layer was sure: rules ConfigError: no model configured at - (needs -)."
    )


def _remote_cascade(calls: list[str], shipped: Path | None = None) -> Cascade:
    rules = _layer("rules", {"c": ("INVALID", 60)}, calls)
    remote = _layer("remote", {"c": ("VALID", 90)}, calls, model_calls=1)
    return Cascade(
        "toy",
        [rules, Layer("remote", remote.run, remote=True)],
        decision=Decision,
        role="agent",
        shipped_policy=shipped,
    )


def test_a_remote_layer_sits_out_when_the_role_runs_the_bundled_model(deps: _Deps) -> None:
    from casework.llm.local import LocalChatModel

    local = RunConfig(models=RoleModels.given(LocalChatModel(model_path=Path("/none.gguf"))))
    calls: list[str] = []
    decision = _remote_cascade(calls)("c", deps, local)
    assert calls == ["rules"] and decision.verdict == "NEEDS_REVIEW"
    calls.clear()
    decision = _remote_cascade(calls)("c", deps, CONFIG)  # a scripted model: not the bundled one
    assert calls == ["rules", "remote"] and decision.verdict == "VALID"


def test_the_policy_is_stored_per_remote_model_and_the_shipped_one_is_offline_only(
    deps: _Deps, tmp_path: Path
) -> None:
    from casework.llm.local import LocalChatModel

    shipped = save_policy(
        CascadePolicy({"rules": LayerPolicy(50.0)}), tmp_path / "shipped" / "cascade.json"
    )
    local = RunConfig(models=RoleModels.given(LocalChatModel(model_path=Path("/none.gguf"))))
    cascade = _remote_cascade([], shipped)
    assert cascade.policy(deps, local).layers["rules"].threshold == 50.0
    assert cascade.policy(deps, CONFIG).layers == {}  # a remote model: its own fit, none yet
    remote = CONFIG.models.name("agent")
    save_policy(
        CascadePolicy({"rules": LayerPolicy(70.0)}), cascade_path(deps.settings.home, "toy", remote)
    )
    assert cascade.policy(deps, CONFIG).layers["rules"].threshold == 70.0
    with pytest.raises(ValueError, match="needs the role"):
        Cascade("toy", [Layer("remote", _layer("r", {}, []).run, remote=True)], decision=Decision)


def _outcome(
    layer: str, verdict: str, confidence: float, right: bool, seconds: float, model_calls: int = 0
) -> LayerOutcome:
    return LayerOutcome(
        layer=layer,
        verdict=verdict,
        confidence=confidence,
        right=right,
        seconds=seconds,
        model_calls=model_calls,
    )


def _dev_cases() -> list[list[LayerOutcome]]:
    """20 cases: rules right above 80 (10 cases at 90, 9 right), unsure below (10 at 60, 5
    right); the model right on 18 of 20 at 95."""
    cases = []
    for i in range(20):
        sure = i < 10
        rules_right = (i != 0) if sure else (i % 2 == 0)
        cases.append(
            [
                _outcome("rules", "VALID", 90 if sure else 60, rules_right, 0.01),
                _outcome("model", "VALID", 95, i not in (3, 15), 5.0, model_calls=1),
            ]
        )
    return cases


def test_fit_takes_what_each_layer_is_sure_of_at_the_target() -> None:
    policy = fit_policy(_dev_cases(), ["rules", "model"], target=0.85, min_pairs=100)
    # 9 of 10 at 90 reach 0.85; 60 does not (every answer here is VALID)
    assert policy.layers["rules"].for_verdict("VALID").threshold == 90.0
    assert policy.layers["model"].for_verdict("VALID").threshold == 95.0
    assert policy.layers["rules"].for_verdict("INVALID").threshold == NEVER
    fitted = policy.fitted
    # rules decide 10 (9 right); the model the other 10 (case 15 wrong): 18 / 20
    assert fitted["accuracy"] == pytest.approx(0.9)
    assert fitted["share"] == {"rules": 0.5, "model": 0.5}
    assert fitted["model_share"] == pytest.approx(0.5)
    assert fitted["seconds_per_case"] == pytest.approx((20 * 0.01 + 10 * 5.0) / 20)


def test_a_target_no_layer_reaches_sends_everything_to_review() -> None:
    policy = fit_policy(_dev_cases(), ["rules", "model"], target=0.99, min_pairs=100)
    assert policy.layers["rules"].for_verdict("VALID").threshold == NEVER
    assert policy.layers["model"].for_verdict("VALID").threshold == NEVER
    assert policy.fitted["needs_review_share"] == 1.0 and policy.fitted["accuracy"] == 0.0


def test_a_budget_lowers_the_cheap_layers_target_until_the_model_share_fits() -> None:
    cases = _dev_cases()
    assert model_layers(cases, ["rules", "model"]) == ["model"]
    # at 0.95 the rules keep nothing (9 of 10 right at 90): the model gets every case; at 0.9
    # they keep the 10 at 90 and the model gets the other half
    half = fit_policy_for_budget(cases, ["rules", "model"], target=0.95, max_model_share=0.6)
    assert half.fitted["cheap_target"] == 0.9 and half.fitted["budget_met"] is True
    assert half.fitted["model_share"] == pytest.approx(0.5)
    assert half.layers["rules"].for_verdict("VALID").threshold == 90.0
    # the model keeps its answers at the target, 0.95: its 10 are right 9 times, so never
    assert half.layers["model"].for_verdict("VALID").threshold == NEVER
    assert half.max_model_share == 0.6 and half.target == 0.95
    # a budget of 0.4: down to 0.7, where the rules' 14 right of 20 take every case
    none = fit_policy_for_budget(cases, ["rules", "model"], target=0.95, max_model_share=0.4)
    assert none.fitted["cheap_target"] == 0.7 and none.fitted["model_share"] == 0.0
    assert none.fitted["accuracy"] == pytest.approx(0.7)
    loaded = CascadePolicy.from_dict(none.to_dict())
    assert loaded.max_model_share == 0.4 and loaded.fitted["cheap_target"] == 0.7


def test_a_budget_out_of_reach_stores_the_cheapest_fit_and_says_so() -> None:
    # rules always wrong: even at the floor (0.5) they keep nothing
    cases = [
        [_outcome("rules", "VALID", 60, False, 0.01), _outcome("model", "VALID", 95, True, 5.0, 1)]
        for _ in range(10)
    ]
    policy = fit_policy_for_budget(cases, ["rules", "model"], target=0.9, max_model_share=0.5)
    assert policy.fitted["budget_met"] is False and policy.fitted["cheap_target"] == 0.5
    assert policy.fitted["model_share"] == 1.0 and policy.fitted["accuracy"] == 1.0


def test_simulate_counts_only_the_layers_a_case_reached() -> None:
    policy = CascadePolicy({"rules": LayerPolicy(NEVER), "model": LayerPolicy(90.0)})
    result = simulate(_dev_cases(), policy, ["rules", "model"])
    assert result["share"] == {"rules": 0.0, "model": 1.0}
    assert result["accuracy"] == pytest.approx(0.9) and result["model_calls_per_case"] == 1.0


def test_sweep_gives_a_point_per_target_and_each_layer_alone() -> None:
    curve = sweep(_dev_cases(), ["rules", "model"], targets=(0.5, 0.85, 0.99))
    assert [p["target"] for p in curve["points"]] == [0.5, 0.85, 0.99]
    assert curve["points"][0]["share"]["rules"] == 1.0  # 14 of 20 right: all kept at 0.5
    assert curve["alone"]["model"]["accuracy"] == pytest.approx(0.9)
    assert curve["alone"]["rules"]["accuracy"] == pytest.approx(14 / 20)


def test_policy_round_trips_through_its_file(tmp_path: Path) -> None:
    policy = fit_policy(_dev_cases(), ["rules", "model"], target=0.85, source="run-1")
    path = save_policy(policy, cascade_path(tmp_path, "receipts", "openai:gpt-4o-mini"))
    assert path.name == "cascade--openai_gpt-4o-mini.json"
    assert cascade_path(tmp_path, "receipts", "local:qwen").name == "cascade--offline.json"
    loaded = load_policy(path)
    assert loaded is not None and loaded.to_dict() == policy.to_dict()
    assert load_policy(tmp_path / "none.json") is None


def test_each_verdict_of_a_layer_gets_its_own_threshold() -> None:
    # the model's VALIDs at 90 are right 10 of 10, its INVALIDs at 90 only 5 of 10
    cases = [[_outcome("model", "VALID", 90, True, 1.0, 1)] for _ in range(10)]
    cases += [[_outcome("model", "INVALID", 90, i < 5, 1.0, 1)] for i in range(10)]
    split = fit_policy(cases, ["model"], target=0.9, min_pairs=100)
    assert split.layers["model"].for_verdict("VALID").threshold == 90.0
    assert split.layers["model"].for_verdict("INVALID").threshold == NEVER
    assert split.fitted["accuracy"] == 0.5 and split.fitted["needs_review_share"] == 0.5
    assert split.fitted["decided_accuracy"] == 1.0
    pooled = fit_policy(cases, ["model"], target=0.9, min_pairs=100, by_verdict=False)
    assert pooled.layers["model"].threshold == NEVER  # 15 of 20 right: below 0.9
    loaded = CascadePolicy.from_dict(split.to_dict())
    assert loaded.layers["model"].for_verdict("INVALID").threshold == NEVER


def test_describe_outcomes_says_what_each_layer_said_and_needed(tmp_path):
    from casework.runtime.cascade import CascadePolicy, describe_outcomes, stored_policy

    outcomes = [
        LayerOutcome(layer="rules", verdict="INVALID", calibrated=40.0, threshold=80.0),
        LayerOutcome(layer="choice", error="ModelError: cut"),
    ]
    assert describe_outcomes(outcomes) == (
        "rules INVALID at 40.0 (needs 80.0); choice ModelError: cut at - (needs -)"
    )
    assert stored_policy(tmp_path, "toy", None).to_dict() == CascadePolicy().to_dict()
