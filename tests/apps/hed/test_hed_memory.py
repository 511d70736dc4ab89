"""hed learns from review: the memory layer answers a repeated description with its verified
annotation (validated again; an invalid one is not used), the bundled model's prompt shows the
nearest verified annotations in place of its generic examples, and deleting an example restores
the answer it changed. Scripted models; the examples are embedded with the bundled MiniLM."""

from __future__ import annotations

import pytest

from casework.apps.hed.data.memory_sweep import split_records
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.memory import HED_MEMORY_THRESHOLD, annotation_memory
from casework.apps.hed.models import HedInput
from casework.apps.hed.strategies import STRATEGIES
from casework.config import get_settings
from casework.llm import RoleModels, ScriptedChatModel, say
from casework.runtime import RunConfig
from casework.runtime.memory_layer import examples_used

DESCRIPTION = "A checkerboard pattern slowly fills the whole screen."
REPEAT = "A checkerboard pattern fills the screen slowly."  # MiniLM similarity 0.98
LOOSE = "A flickering checkerboard slowly fills the whole screen."  # 0.86
VERIFIED = "Sensory-event, Visual-presentation, (Black, White, Pattern), Computer-screen"
MODEL = "Sensory-event, Visual-presentation, (Pattern, Computer-screen)"
GENERIC = "A red circle appears in the center of the screen."  # the prompt's generic example


def _run(steps):
    """(deps, config, the annotation prompts the model saw): a scripted stand-in for the
    bundled model, which fails on any call beyond ``steps``."""
    seen: list[str] = []

    def seeing(message):
        return lambda messages: seen.append(str(messages[-1].content)) or message

    model = ScriptedChatModel(steps=[seeing(m) for m in steps], model_name="scripted-local")
    deps = HedDeps(settings=get_settings(), validator="python")
    return deps, RunConfig(models=RoleModels.given(model)), seen


def _verify(deps, config, description: str, hed: str) -> int:
    memory = annotation_memory(deps, config)
    inputs = {"description": description}
    return memory.add(description, inputs, {"hed": hed}, verified_by="ana", source="api").id


def test_a_repeated_description_takes_its_verified_annotation_with_no_model_call(settings):
    deps, config, seen = _run([])
    example = _verify(deps, config, DESCRIPTION, VERIFIED)
    for asked in (DESCRIPTION, REPEAT):
        decision = STRATEGIES["cascade"](HedInput(description=asked), deps, config)
        assert decision.run.decided_by == "memory" and seen == []
        assert [o.layer for o in decision.run.layers] == ["memory"]
        assert (decision.verdict, decision.annotation, decision.is_valid) == (
            "VALID",
            VERIFIED,
            True,
        )
        assert decision.confidence >= HED_MEMORY_THRESHOLD
        assert examples_used(decision) == [example]
        assert decision.run.usage.model_calls == 0


def test_an_invalid_remembered_annotation_is_not_used(settings):
    deps, config, _ = _run([say(MODEL)])
    _verify(
        deps, config, DESCRIPTION, "Sensory-event, (Pattern, Pattern)"
    )  # a tag twice in a group
    decision = STRATEGIES["cascade"](HedInput(description=DESCRIPTION), deps, config)
    memory = decision.run.layers[0]
    assert (memory.layer, memory.verdict, memory.confidence, memory.kept) == (
        "memory",
        "INVALID",
        0.0,
        False,
    )
    assert decision.annotation == MODEL and decision.run.decided_by == "local"


def test_the_model_sees_the_nearest_verified_annotations_instead_of_the_generic_examples(
    settings,
):
    deps, config, seen = _run([say(MODEL)])
    example = _verify(deps, config, DESCRIPTION, VERIFIED)
    decision = STRATEGIES["cascade"](HedInput(description=LOOSE), deps, config)
    memory = decision.run.layers[0]
    assert memory.layer == "memory" and not memory.kept  # near, not near enough
    assert decision.run.decided_by == "local"
    assert f'Example. Event: "{DESCRIPTION}"\nHED: {VERIFIED}' in seen[0]
    assert GENERIC not in seen[0]  # replaced, not added to
    assert examples_used(decision) == [example]


def test_the_generic_examples_stay_while_the_memory_is_empty(settings):
    deps, config, seen = _run([say(MODEL)])
    decision = STRATEGIES["cascade"](HedInput(description=LOOSE), deps, config)
    assert GENERIC in seen[0] and examples_used(decision) == []


def test_removing_the_example_restores_the_models_annotation(settings):
    deps, config, _ = _run([say(MODEL)])
    before = STRATEGIES["cascade"](HedInput(description=DESCRIPTION), deps, config)
    assert before.annotation == MODEL
    example = _verify(deps, config, DESCRIPTION, VERIFIED)
    learned = STRATEGIES["cascade"](HedInput(description=DESCRIPTION), *_run([])[:2])
    assert learned.annotation == VERIFIED and learned.run.decided_by == "memory"
    annotation_memory(deps, config).delete(example)
    deps, config, _ = _run([say(MODEL)])
    after = STRATEGIES["cascade"](HedInput(description=DESCRIPTION), deps, config)
    assert after.annotation == MODEL and examples_used(after) == []


def test_the_sweep_splits_each_dataset_in_halves():
    records = [(i, {"metadata": {"dataset": d}}) for i, d in enumerate("aaabb", start=1)]
    stored, measured = split_records(records)
    assert [n for n, _ in stored] == [1, 4] and [n for n, _ in measured] == [2, 3, 5]


@pytest.mark.slow
@pytest.mark.local_model
def test_bundled_model_annotates_with_a_verified_annotation_as_its_example(settings) -> None:
    pytest.importorskip("xllamacpp")
    deps = HedDeps(settings=settings, validator="python")
    config = RunConfig.of(settings, "local:qwen2.5-coder-1.5b")
    example = _verify(
        deps,
        config,
        "Feedback that the last participant response was correct.",
        "(Feedback, Correct-action)",
    )
    asked = HedInput(description="A message tells the participant that the answer was wrong.")
    decision = STRATEGIES["cascade"](asked, deps, config)
    local = next(o for o in decision.run.layers if o.layer == "local")
    assert local.model_calls == 1 and examples_used(decision) == [example]
    assert decision.is_valid, decision.validation_errors
    assert "Feedback" in decision.annotation, decision.annotation  # the example's convention
