"""The annotation state machine with scripted models: every route and limit of the spec."""

from __future__ import annotations

from dataclasses import replace

import pytest

from casework.apps.hed.agent import route_after_evaluation, route_after_validation
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import HedInput
from casework.apps.hed.rules import outcome
from casework.apps.hed.strategies import STRATEGIES
from casework.config import get_settings
from casework.errors import InputError
from casework.llm import RoleModels, ScriptedChatModel, call, say
from casework.runtime import EndReason, RunConfig

GOOD = "Sensory-event, Visual-presentation, (Red, Circle)"
TYPO = "Sensory-event, Visual-presentation, (Red, Cirle)"
DESCRIPTION = "A red circle appears on the screen."


def faithful(ok: bool = True, feedback: str = ""):
    return call("FaithfulnessVerdict", faithful=ok, feedback=feedback)


def deps_for(model: ScriptedChatModel) -> tuple[HedDeps, RunConfig]:
    """The deps and a run config on ``model``: ``STRATEGIES[s](input, *deps_for(model))``."""
    return HedDeps(settings=get_settings(), validator="python"), RunConfig(
        models=RoleModels.given(model)
    )


def run(strategy: str, steps: list, **input_args):
    model = ScriptedChatModel(steps=steps)
    decision = STRATEGIES[strategy](
        HedInput(description=DESCRIPTION, **input_args), *deps_for(model)
    )
    model.assert_exhausted()
    return decision, model


def test_valid_first_try() -> None:
    steps: list[tuple[str, str]] = []
    model = ScriptedChatModel(steps=[say(GOOD), faithful()])
    deps, config = deps_for(model)
    d = STRATEGIES["loop"](
        HedInput(description=DESCRIPTION),
        deps,
        replace(config, events=lambda e: steps.append((e["node"], e["annotation"]))),
    )
    assert steps == [("annotate", GOOD), ("validate", GOOD), ("evaluate", GOOD)]
    assert (d.verdict, d.validation_status, d.annotation) == ("VALID", "valid", GOOD)
    assert (d.is_valid, d.is_faithful, d.is_complete, d.first_try_valid) == (True, True, None, True)
    assert (d.validation_attempts, d.total_iterations, model.calls) == (1, 1, 2)
    assert d.run.ended_by == EndReason.SUBMIT and d.run.strategy == "loop"
    assert d.run.usage.model_calls == 2
    assert d.final_status == "valid, faithful" and d.confidence == 80


def test_invalid_then_fixed_with_augmented_feedback() -> None:
    seen: list[str] = []

    def second_annotation(messages):
        seen.append(messages[-1].content)
        return say(GOOD)

    d, _ = run(
        "loop", [say(TYPO), say("Replace Cirle with Circle."), second_annotation, faithful()]
    )
    assert (d.verdict, d.validation_attempts, d.total_iterations) == ("VALID", 2, 2)
    assert d.first_try_valid is False
    assert [h["codes"] for h in d.history if h["step"] == "validate"] == [["TAG_INVALID"], []]
    # The next annotation sees the previous answer, the summary and the closest tags verbatim.
    assert f"Your previous answer was: {TYPO}" in seen[0]
    assert "Replace Cirle with Circle." in seen[0]
    assert "Closest valid tags for 'Cirle': Circle" in seen[0]


def test_never_valid_ends_at_max_attempts_with_the_last_errors() -> None:
    steps = [say(TYPO)]
    for _ in range(4):
        steps += [say("fix the tag"), say(TYPO)]
    d, _ = run("loop", steps)
    assert (d.verdict, d.validation_status) == ("INVALID", "max_attempts_reached")
    assert (d.validation_attempts, d.total_iterations, d.is_valid) == (5, 5, False)
    assert d.validation_errors[0].startswith("TAG_INVALID:")
    assert "Closest valid tags for 'Cirle': Circle" in d.validation_errors_augmented[0]
    assert d.run.ended_by == EndReason.LIMIT_MODEL_CALLS
    assert d.run.detail == "max_validation_attempts (5) without valid HED"


def test_unfaithful_loop_stops_at_max_iterations_and_still_assesses() -> None:
    """Ten valid but unfaithful annotations: the loop ends at the iteration cap, the requested
    assessment runs, and the result is NEEDS_REVIEW, not success. Every validation counts as an
    attempt, but the attempt cap only ends a run whose annotation is invalid."""
    steps = [say(GOOD), faithful(False, "Say it is on the screen.")]
    for _ in range(9):
        steps += [say("Add Computer-screen."), say(GOOD), faithful(False, "Still no screen.")]
    steps.append(call("AssessmentVerdict", complete=False, missing=["location"], feedback=""))
    model = ScriptedChatModel(steps=steps)
    d = STRATEGIES["loop"](HedInput(description=DESCRIPTION, run_assessment=True), *deps_for(model))
    model.assert_exhausted()
    assert (d.verdict, d.is_valid, d.is_faithful, d.is_complete) == (
        "NEEDS_REVIEW",
        True,
        False,
        False,
    )
    assert (d.total_iterations, d.validation_attempts) == (10, 10)
    assert d.final_status == "valid, not faithful, incomplete"
    assert d.assessment_feedback == "Missing: location."
    assert d.run.detail == "max_total_iterations (10) without a faithful annotation"


def test_unfaithful_then_faithful() -> None:
    d, _ = run(
        "loop",
        [
            say("Sensory-event, Red"),
            faithful(False, "Add Circle."),
            say("Add (Red, Circle)."),
            say(GOOD),
            faithful(),
        ],
    )
    assert (d.verdict, d.total_iterations, d.is_faithful) == ("VALID", 2, True)
    assert [h["step"] for h in d.history] == ["validate", "evaluate", "validate", "evaluate"]


def test_one_shot_does_not_loop() -> None:
    d, model = run("one-shot", [say(TYPO)])
    assert (d.verdict, d.validation_status, d.total_iterations) == (
        "INVALID",
        "max_attempts_reached",
        1,
    )
    assert model.calls == 1 and d.run.strategy == "one-shot"


def test_loop_without_evaluation() -> None:
    d, model = run("loop-no-eval", [say(TYPO), say("Use Circle."), say(GOOD)])
    assert (d.verdict, d.is_faithful, d.final_status) == (
        "VALID",
        None,
        "valid, faithfulness not checked",
    )
    assert d.confidence == 60 and model.calls == 3


def test_assessment_runs_only_when_requested() -> None:
    d, _ = run(
        "loop",
        [
            say(GOOD),
            faithful(),
            call("AssessmentVerdict", complete=True, missing=[], feedback="Complete."),
        ],
        run_assessment=True,
    )
    assert (d.is_complete, d.confidence, d.final_status) == (True, 90, "valid, faithful, complete")


def test_a_model_failure_ends_the_run_with_what_it_had() -> None:
    d, _ = run("loop", [say(TYPO)])  # the summariser call finds the script empty
    assert d.run.ended_by == EndReason.ERROR_MODEL
    assert (d.annotation, d.verdict) == (TYPO, "INVALID")
    assert "scripted model was called 2 times" in d.reasoning


def test_empty_model_answer_is_an_invalid_attempt() -> None:
    d, _ = run("one-shot", [say("   ")])
    assert d.validation_errors == ["TAG_EMPTY: The annotation is empty: answer with a HED string."]


def test_bad_input_is_one_sentence() -> None:
    model = ScriptedChatModel(steps=[])
    with pytest.raises(InputError, match="empty"):
        STRATEGIES["loop"](HedInput(description=" "), *deps_for(model))
    with pytest.raises(InputError, match="Unknown HED schema version"):
        STRATEGIES["loop"](HedInput(description="x", schema_version="7.2.0"), *deps_for(model))
    assert model.calls == 0


def test_routing_at_the_limits() -> None:
    base = {
        "run_evaluation": True,
        "run_assessment": False,
        "total_iterations": 3,
        "max_total_iterations": 10,
    }
    assert route_after_validation({**base, "validation_status": "valid"}) == "evaluate"
    assert route_after_validation({**base, "validation_status": "invalid"}) == "summarize_feedback"
    assert (
        route_after_validation({**base, "validation_status": "max_attempts_reached"}) == "__end__"
    )
    no_eval = {**base, "run_evaluation": False, "validation_status": "valid"}
    assert route_after_validation(no_eval) == "__end__"
    assert route_after_validation({**no_eval, "run_assessment": True}) == "assess"
    assert route_after_evaluation({**base, "is_faithful": False}) == "summarize_feedback"
    assert route_after_evaluation({**base, "is_faithful": True}) == "__end__"
    at_cap = {**base, "total_iterations": 10, "is_faithful": False}
    assert route_after_evaluation(at_cap) == "__end__"
    assert route_after_evaluation({**at_cap, "run_assessment": True}) == "assess"
    assert route_after_evaluation({**base, "is_faithful": None}) == "__end__"


def test_outcome_table() -> None:
    assert outcome(False, True, True).verdict == "INVALID"
    assert outcome(True, False, None).verdict == "NEEDS_REVIEW"
    assert outcome(True, None, None).final_status == "valid, faithfulness not checked"
    assert outcome(True, True, False).confidence == 80


def test_every_agent_shares_one_system_turn_with_rules_and_vocabulary() -> None:
    """One system prefix for all agents keeps a local model's prompt cache warm."""
    systems: list[str] = []

    def record(step):
        def respond(messages):
            systems.append(messages[0].content)
            return step

        return respond

    steps = [say(TYPO), say("Use Circle."), say(GOOD), faithful()]
    steps.append(call("AssessmentVerdict", complete=True, missing=[], feedback=""))
    run("loop", [record(s) for s in steps], run_assessment=True)
    assert len(systems) == 5 and len(set(systems)) == 1
    assert "HED annotation rules:" in systems[0] and "Mouse-button" in systems[0]
    vocabulary = systems[0].split("Vocabulary (short-form", 1)[1]
    assert "Item/" not in vocabulary and "Geometric-object/" not in vocabulary


def test_a_run_under_an_override_names_that_model(tmp_path) -> None:
    """Under a model spec (``--model``, ``X-Casework-Model``) the decision names that spec
    (issue #20). The spec replays a scripted recording of the same description."""
    from casework.llm import RecordingChatModel

    cassette = tmp_path / "one-shot.jsonl"
    scripted = ScriptedChatModel(steps=[say(GOOD)])
    recording = RoleModels.given(RecordingChatModel.wrap(scripted, cassette))
    settings = get_settings()
    deps = HedDeps(settings=settings, validator="python")
    recorded = STRATEGIES["one-shot"](
        HedInput(description=DESCRIPTION), deps, RunConfig(models=recording)
    )
    spec = f"replay:{cassette}"
    replayed = STRATEGIES["one-shot"](
        HedInput(description=DESCRIPTION), deps, RunConfig.of(settings, spec)
    )
    assert (recorded.run.model, replayed.run.model) == ("scripted", spec)
    assert replayed.annotation == GOOD and replayed.verdict == recorded.verdict


def test_a_graph_run_and_a_react_run_write_the_same_trace(tmp_path) -> None:
    """Both go through the runtime's harness: the same start and end records, the same usage
    accounting, the run's ids and trace on the decision's RunInfo."""
    from pydantic import BaseModel

    from casework.runtime import ReactAgent
    from casework.runtime.traces import read_trace

    model = ScriptedChatModel(steps=[say(GOOD), faithful()])
    settings = get_settings().model_copy(update={"home": tmp_path})
    deps = HedDeps(settings=settings, validator="python")
    config = RunConfig(models=RoleModels.given(model), traces=settings.traces_dir)
    d = STRATEGIES["loop"](HedInput(description=DESCRIPTION), deps, config)
    hed = read_trace(d.run.trace_path)
    assert d.run.trace_path == tmp_path / "traces" / f"hed-{d.run.run_id}.jsonl"
    assert [(r["type"], r.get("node")) for r in hed] == [
        ("run_start", None),
        ("step", "annotate"),
        ("step", "validate"),
        ("step", "evaluate"),
        ("run_end", None),
    ]
    assert (hed[0]["agent"], hed[0]["strategy"], hed[0]["payload"]["description"]) == (
        "hed",
        "loop",
        DESCRIPTION,
    )
    assert (hed[-1]["ended_by"], hed[-1]["result"]["annotation"]) == ("submit", GOOD)
    assert hed[-1]["usage"]["model_calls"] == d.run.usage.model_calls == 2
    assert (d.run.thread_id, hed[-1]["run_id"]) == (d.run.run_id, d.run.run_id)

    class Verdict(BaseModel):
        verdict: str

    react = ScriptedChatModel(steps=[call("submit_decision", verdict="VALID")])
    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(react), traces=tmp_path),
        role="agent",
        tools=[],
        decision_model=Verdict,
        system_prompt="s",
    )
    other = read_trace(agent.run("v").trace_path)
    assert set(other[0]) - {"strategy"} == set(hed[0]) - {"strategy"}
    assert set(other[-1]) == set(hed[-1])
