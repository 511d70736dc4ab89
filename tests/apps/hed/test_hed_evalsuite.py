"""`casework eval hed`: the suite on scripted models, recorded and replayed through the CLI,
the no-model baseline, the routing cases and a user's own dataset."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from casework import cli
from casework.apps.hed.evalsuite import (
    by_category,
    case_input,
    eval_suite,
    hed_case_metrics,
    route,
)
from casework.apps.hed.models import HedInput
from casework.config import Settings, get_settings
from casework.errors import InputError
from casework.evals.runner import run_suite
from casework.evals.suite import CaseOutput, EvalCase
from casework.llm import ScriptedChatModel, call, say
from casework.registry import get_app

GOOD = "Sensory-event, Visual-presentation, (Red, Circle)"
TYPO = "Sensory-event, Visual-presentation, (Red, Cirle)"


def scripted_models() -> Any:
    """``base_model(case_id, role)``: one scripted model per case, shared by its roles. Case
    hed-001 first answers with a typo (so its loop takes a second attempt); every annotation
    is then GOOD and the judge finds it faithful."""
    models: dict[str, ScriptedChatModel] = {}

    def for_case(case_id: str) -> ScriptedChatModel:
        answered: list[str] = []

        def responder(messages: list, tools: list) -> Any:
            if tools:
                return call("FaithfulnessVerdict", faithful=True, feedback="")
            prompt = str(messages[-1].content)
            if prompt.startswith("You are the summariser"):
                return say("Replace Cirle with Circle.")
            answered.append(prompt)
            return say(TYPO if case_id == "hed-001" and len(answered) == 1 else GOOD)

        return ScriptedChatModel(responder=responder)

    def base_model(case_id: str, role: str) -> ScriptedChatModel:
        if case_id not in models:
            models[case_id] = for_case(case_id)
        return models[case_id]

    return base_model


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def test_the_app_registers_its_suite_strategies_and_router() -> None:
    spec = get_app("hed")
    assert spec.eval_suite is not None and spec.router is not None and spec.strategies
    assert sorted(spec.strategies()) == [
        "cascade",
        "loop",
        "loop-no-eval",
        "memory",
        "memory-analogy",
        "one-shot",
        "rules",
    ]
    suite = eval_suite()
    assert suite.default_strategy == "cascade" and sorted(suite.datasets) == ["gold", "routing"]
    assert suite.learning_metric == "tag_f1"  # what `eval hed --learn` draws per tenth


def test_loop_on_two_gold_cases_recorded_then_replayed_by_the_cli(
    settings: Settings, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    run = run_suite(
        eval_suite(),
        strategy="loop",
        limit=2,
        settings=settings,
        base_model=scripted_models(),
        record=True,
        out_dir=run_dir,
        progress=False,
        concurrency=2,
    )
    # right = valid with tag F1 >= 0.5: GOOD finds 2 of hed-002's 8 gold items
    assert [c.case_id for c in run.failed_cases] == ["hed-002"]
    m = run.metrics
    assert (m["validity_final"], m["validity_first_try"]) == (1.0, 0.5)
    assert m["iterations_per_annotation"] == 1.5  # hed-001 took two annotations
    # Model calls: hed-001 annotate, summarise, annotate, judge (4); hed-002 annotate, judge.
    assert m["model_calls_per_annotation"] == 3.0
    # GOOD against the gold strings: hed-001 P 1, R 5/8; hed-002 P 2/5, R 2/8.
    assert m["tag_precision"] == pytest.approx((1.0 + 0.4) / 2)
    assert m["tag_recall"] == pytest.approx((5 / 8 + 2 / 8) / 2)
    assert m["tag_f1"] == pytest.approx((2 * 0.625 / 1.625 + 2 * 0.1 / 0.65) / 2)
    assert m["annotation_exact_match"] == 0.0
    assert m["seconds_per_annotation"] > 0
    assert sorted(p.name for p in (run_dir / "cassettes").iterdir()) == [
        "hed-001.jsonl",
        "hed-002.jsonl",
    ]
    assert {c.case_id: c.trace is not None for c in run.cases} == {
        "hed-001": True,
        "hed-002": True,
    }

    # The same run offline through the command line: every model call from the cassettes.
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        cli.main(["eval", "hed", "--replay", str(run_dir), "--json", "--no-progress"])
    replayed = json.loads(buffer.getvalue())
    assert replayed["strategy"] == "loop" and replayed["cases"] == 2
    for key in ("validity_final", "validity_first_try", "tag_f1", "model_calls_per_annotation"):
        assert replayed["metrics"][key] == pytest.approx(m[key]), key
    # The lead's form: --model replay:CASSETTES with the strategy and limit named.
    buffer = io.StringIO()
    argv = ["eval", "hed", "--strategy", "loop", "--limit", "2", "--json", "--no-progress"]
    with redirect_stdout(buffer):
        cli.main([*argv, "--model", f"replay:{run_dir / 'cassettes'}"])
    again = json.loads(buffer.getvalue())
    assert again["cases"] == 2 and again["metrics"]["tag_f1"] == pytest.approx(m["tag_f1"])


def test_rules_baseline_needs_no_model(settings: Settings) -> None:
    run = run_suite(eval_suite(), strategy="rules", limit=3, settings=settings, progress=False)
    m = run.metrics
    assert m["validity_final"] == 1.0 and m["model_calls_per_annotation"] == 0.0
    assert m["iterations_per_annotation"] == 0.0
    assert {c.ended_by for c in run.cases} == {"rules"}
    table = by_category(run.cases)
    assert list(table) == ["visual"] and table["visual"]["cases"] == 3.0
    assert table["visual"]["tag_f1"] == pytest.approx(m["tag_f1"])
    assert run.details["plots"] == ["plots/by_category.png"], run.details.get("plot_errors")
    first = run.cases[0].output
    assert first is not None
    assert first["annotation"] == (
        "Sensory-event, Visual-presentation, Red, Circle, Center-of, Computer-screen"
    )
    assert m["tag_f1"] == pytest.approx(0.857, abs=0.001)


def test_routing_cases_under_any_strategy(settings: Settings) -> None:
    run = run_suite(
        eval_suite(), strategy="one-shot", dataset="routing", settings=settings, progress=False
    )
    assert len(run.cases) == 12 and run.metrics["routing_correct"] == 1.0
    assert run.metrics["field_match.next"] == 1.0
    with pytest.raises(InputError, match="must be validate or evaluate"):
        route(case_input(EvalCase(id="x", inputs={"after": "annotate", "state": {}})))


def test_a_users_dataset_file(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    rows = [
        {"id": "m1", "inputs": {"description": "A beep sounds."}, "expected": {"hed": "Beep"}},
        {"id": "m2", "inputs": {"text": "no description"}, "expected": {"hed": "Beep"}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run = run_suite(eval_suite(), strategy="rules", dataset=path, settings=settings, progress=False)
    by_id = {c.case_id: c for c in run.cases}
    assert by_id["m1"].error is None and by_id["m1"].domain["tag_recall"] == 1.0
    assert "has no inputs.description" in (by_id["m2"].error or "")


def test_case_metrics_normalise_long_form() -> None:
    case = EvalCase(id="c", inputs={"description": "x"}, expected={"hed": "(Red, Circle)"})
    out = CaseOutput(
        output={
            "annotation": "(Property/Sensory-property/Sensory-attribute/Visual-attribute/"
            "Color/CSS-color/Red-color/Red, Circle)",
            "is_valid": True,
            "first_try_valid": True,
            "total_iterations": 1,
        }
    )
    m = hed_case_metrics(case, out)
    assert (m["annotation_exact_match"], m["tag_f1"], m["validity_first_try"]) == (1.0, 1.0, 1.0)
    assert isinstance(case_input(case), HedInput)


def test_a_transient_model_error_is_retried_by_the_harness(settings: Settings) -> None:
    failed: list[str] = []

    def base_model(case_id: str, role: str) -> ScriptedChatModel:
        def responder(messages: list, tools: list) -> Any:
            if case_id not in failed:
                failed.append(case_id)
                raise TimeoutError("the provider timed out")
            return say(GOOD)

        return ScriptedChatModel(responder=responder)

    run = run_suite(
        eval_suite(),
        strategy="one-shot",
        limit=2,
        settings=settings,
        base_model=base_model,
        progress=False,
        backoff=0.01,
    )
    assert [c.case_id for c in run.failed_cases] == ["hed-002"]
    assert [c.attempts for c in run.cases] == [2, 2]
    assert run.metrics["validity_final"] == 1.0
