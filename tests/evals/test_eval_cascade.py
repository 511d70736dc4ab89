"""A cascade through the harness: per-layer shares, --all-layers, the curve, the fit stored
and used by the next run."""

from __future__ import annotations

import json
from pathlib import Path

from evals_toy import KB, ToyDecision, ToyDeps, ToyInput, make_cases, make_suite, write_dataset

from casework.evals.calibrate import calibrate_cascade
from casework.evals.runner import run_suite
from casework.evals.store import load_run
from casework.runtime.cascade import Cascade, Layer, cascade_path, load_policy
from casework.runtime.decision import EndReason, RunInfo
from casework.runtime.runconfig import RunConfig
from casework.runtime.usage import Usage

# A "rules" layer sure of fruit only (confidence 95), unsure of the rest (50, NEEDS_REVIEW);
# a "model" layer that knows everything but vegetables, costing 2 s and one model call.


def rules_layer(input: ToyInput, deps: ToyDeps, config: RunConfig) -> ToyDecision:
    word, label = input.inputs["word"], input.inputs["label"]
    if KB.get(word) == "FRUIT":
        verdict, confidence = ("VALID" if label == "FRUIT" else "INVALID"), 95.0
    else:
        verdict, confidence = "NEEDS_REVIEW", 50.0
    return ToyDecision(
        verdict=verdict,
        confidence=confidence,
        reasoning="rules",
        run=RunInfo(ended_by=EndReason.RULES, strategy="rules", usage=Usage(wall_seconds=0.01)),
    )


def model_layer(input: ToyInput, deps: ToyDeps, config: RunConfig) -> ToyDecision:
    word, label = input.inputs["word"], input.inputs["label"]
    right = "VALID" if KB.get(word) == label else "INVALID"
    wrong = "INVALID" if right == "VALID" else "VALID"
    verdict = wrong if KB.get(word) == "VEGETABLE" else right
    return ToyDecision(
        verdict=verdict,
        confidence=90.0,
        reasoning="model",
        run=RunInfo(
            ended_by=EndReason.SUBMIT,
            strategy="model",
            model="toy-model",
            usage=Usage(model_calls=1, wall_seconds=2.0),
        ),
    )


CASCADE = Cascade(
    "toy", [Layer("rules", rules_layer), Layer("model", model_layer)], decision=ToyDecision
)


def test_cascade_run_reports_layers_and_fits_a_policy_that_the_next_run_uses(
    settings, tmp_path: Path
) -> None:
    dataset = write_dataset(tmp_path / "toy2.jsonl", make_cases(copies=2))
    suite = make_suite(dataset, strategies={"cascade": CASCADE}, default_strategy="cascade")
    # 16 toy cases (8 twice): 6 fruit words (rules sure), 6 vegetables (model wrong), 4 fish
    explored = run_suite(suite, all_layers=True, progress=False)
    m = explored.metrics
    assert m["layer_share.rules"] == 6 / 16 and m["layer_share.model"] == 10 / 16
    assert m["model_share"] == 10 / 16 and m["undecided_share"] == 0.0
    assert m["verdict_accuracy"] == 10 / 16  # the model is wrong on the 6 vegetables
    # cost is what the cascade paid, not what exploring ran: 3 x 0.01 + 5 x 2.01 over 8 (twice)
    assert m["wall_seconds_mean"] == __import__("pytest").approx((3 * 0.01 + 5 * 2.01) / 8)
    case = next(c for c in explored.cases if c.inputs["word"] == "apple")
    assert case.decided_by == "rules" and [o["layer"] for o in case.layers] == ["rules", "model"]
    assert [o["right"] for o in case.layers] == [True, True]
    curve = explored.details["cascade"]["curve"]
    assert curve["alone"]["model"]["accuracy"] == 10 / 16
    assert curve["alone"]["rules"]["accuracy"] == 6 / 16
    report = Path(explored.run_dir or "") / "report.html"
    assert "Accuracy–cost curve" in report.read_text()
    assert (Path(explored.run_dir or "") / "cascade_curve.svg").read_text().startswith("<?xml")

    # fit for 0.9: the rules keep their 3 (all right); the model's 90s are right 4 of 10: never
    policy, path = calibrate_cascade(load_run(explored.run_id), settings, target=0.9)
    assert path == cascade_path(settings.home, "toy", None)
    rules, model = policy.layers["rules"], policy.layers["model"]
    assert rules.for_verdict("VALID").threshold <= 95  # the fruit: 2 x (apple, banana, cherry)
    assert model.for_verdict("VALID").threshold > 100  # right on fish, wrong on vegetables
    assert model.for_verdict("INVALID").threshold > 100
    assert json.loads(path.read_text())["source"] == explored.run_id

    again = run_suite(suite, progress=False)
    assert again.metrics["layer_share.rules"] == 6 / 16
    assert again.metrics["undecided_share"] == 10 / 16 and again.metrics["model_share"] == 10 / 16
    assert again.metrics["accuracy"] == 6 / 16  # needs review counts as not right


def test_calibrate_for_a_budget_says_when_it_is_out_of_reach(settings, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from casework.evals.cli import build_app

    dataset = write_dataset(tmp_path / "toy3.jsonl", make_cases(copies=2))
    suite = make_suite(dataset, strategies={"cascade": CASCADE}, default_strategy="cascade")
    explored = run_suite(suite, all_layers=True, progress=False)
    # the rules are sure of fruit only: 10 of 16 cases reach the model whatever they keep at
    policy, path = calibrate_cascade(
        load_run(explored.run_id), settings, target=0.9, max_model_share=0.2
    )
    assert policy.fitted["budget_met"] is False and policy.fitted["model_share"] == 10 / 16
    assert json.loads(path.read_text())["max_model_share"] == 0.2
    result = CliRunner().invoke(
        build_app(), ["calibrate", explored.run_id, "--max-model-share", "0.7"]
    )
    assert result.exit_code == 0, result.output
    assert "at most 0.70 of cases to the model" in " ".join(result.output.split())
    assert "out of reach" not in result.output
    assert load_policy(path).max_model_share == 0.7  # type: ignore[union-attr]
