"""Analogy from a verified sibling: the pure rewrite and the cascade layer on a real store.
The sibling pairs are levels of hed-examples sidecars (their authors' annotations)."""

from __future__ import annotations

import pytest

from casework.apps.hed.analogy import analogy, content_words, negations
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.memory import annotation_memory
from casework.apps.hed.models import HedInput
from casework.apps.hed.strategies import STRATEGIES
from casework.apps.hed.vocabulary import load_vocabulary
from casework.config import get_settings
from casework.llm import RoleModels, ScriptedChatModel, say
from casework.runtime import RunConfig
from casework.runtime.memory_layer import examples_used


@pytest.fixture(scope="module")
def vocab():
    return load_vocabulary("8.3.0")


SIBLINGS = [
    (  # a word part of a tag name
        "Feedback that the last participant response was incorrect.",
        "Feedback that the last participant response was correct.",
        "(Feedback, Correct-action)",
        "(Feedback, Incorrect-action)",
    ),
    (  # a camel-case colour, the group kept
        "Presentation of a dark blue square.",
        "Presentation of a light blue square.",
        "Sensory-event, Visual-presentation, (Square, LightBlue, (Center-of, Computer-screen))",
        "Sensory-event, Visual-presentation, (Square, DarkBlue, (Center-of, Computer-screen))",
    ),
    (  # a value changes freely
        "Presentation of a 500 Hz tone.",
        "Presentation of a 550 Hz tone.",
        "Sensory-event, Auditory-presentation, (Tone, Frequency/550 Hz)",
        "Sensory-event, Auditory-presentation, (Tone, Frequency/500 Hz)",
    ),
    (  # a label's value and a tag, both named by the word
        "Experimental condition in which participant only pays attention to visual stimuli.",
        "Experimental condition in which participant only pays attention to auditory stimuli.",
        "(Condition-variable/Auditory-focus, (Focused-attention, Auditory-presentation))",
        "(Condition-variable/Visual-focus, (Focused-attention, Visual-presentation))",
    ),
    (  # a whole tag
        "Button press deny access.",
        "Button press allow access.",
        "Agent-action, (Press, Push-button), (Allow, Label/Area_access)",
        "Agent-action, (Press, Push-button), (Deny, Label/Area_access)",
    ),
    (  # the tag's part is longer than the word: right -> Rightward
        "The arrow points to the left.",
        "The arrow points to the right.",
        "Sensory-event, (Arrow, Rightward)",
        "Sensory-event, (Arrow, Leftward)",
    ),
    (  # "not" alone, dropped
        "This probe letter is a target.",
        "This probe letter is not a target.",
        "Non-target",
        "Target",
    ),
    (  # words the author left unannotated stay so (a typo included)
        "Right perturation no duration - considered a recording error.",
        "Left perturbation no duration - considered a recording error.",
        "(Experiment-control, Mishap)",
        "(Experiment-control, Mishap)",
    ),
]


@pytest.mark.parametrize(("description", "verified", "annotation", "expected"), SIBLINGS)
def test_a_sibling_takes_the_verified_annotation_with_its_words_swapped(
    vocab, description, verified, annotation, expected
) -> None:
    found = analogy(description, verified, annotation, vocab)
    assert found is not None and found.annotation == expected


NOT_SIBLINGS = [
    # a word added in another place (and one dropped): "flickering" is no rewrite of "pattern"
    (
        "A flickering checkerboard slowly fills the whole screen.",
        "A checkerboard pattern slowly fills the whole screen.",
        "Sensory-event, (Pattern, Computer-screen)",
    ),
    # a word only added changes what is said ("correctly")
    (
        "Participant correctly indicated that the probe was a target.",
        "Participant indicated that the probe was a target.",
        "(Target, Incorrect-action)",
    ),
    # the same content words: the memory layer's case, not an analogy
    (
        "The participant indicated that the probe was a target but the probe was not a target.",
        "Participant indicated that the probe was not a target but the probe was a target.",
        "(Target, Incorrect-action)",
    ),
    # the rewritten name is no schema tag (Attend-to -> Ignored-to)
    (
        "Indicates that the stimulus should be ignored to.",
        "Indicates that the stimulus should be attend to.",
        "Attend-to",
    ),
    # the old word was unannotated, the new one names a tag the author would have used
    ("A tone is heard.", "Something is heard.", "Sensory-event, Auditory-presentation"),
    # one word shared, two replaced: not siblings
    ("vertical bar", "missed top bar", "Label/Unsuccessful-stop-trial"),
    ("male", "female", "Label/Female-image"),
]


@pytest.mark.parametrize(("description", "verified", "annotation"), NOT_SIBLINGS)
def test_no_analogy_where_the_words_do_not_line_up(
    vocab, description, verified, annotation
) -> None:
    assert analogy(description, verified, annotation, vocab) is None


def test_the_confidence_is_the_similarity_less_each_unannotated_pair(vocab) -> None:
    swapped = analogy(*SIBLINGS[0][:3], vocab)
    unsaid = analogy(*SIBLINGS[-1][:3], vocab)
    assert swapped is not None and unsaid is not None
    assert swapped.swaps == (("Correct-action", "Incorrect-action"),) and swapped.kept == ()
    assert unsaid.kept == (("left", "right"), ("perturbation", "perturation"))
    assert swapped.confidence(0.94) == 94.0 and unsaid.confidence(0.94) == 84.0


def test_content_words_drop_function_words_and_repeats() -> None:
    assert content_words("The probe was not a target but the probe was a target.") == [
        "probe",
        "not",
        "target",
        "but",
    ]


def _deps_config():
    model = ScriptedChatModel(steps=[], model_name="scripted-local")  # any call fails
    deps = HedDeps(settings=get_settings(), validator="python")
    return deps, RunConfig(models=RoleModels.given(model)), model


def _verify(deps, config, description: str, hed: str):
    """A verified annotation in the caller's memory (as a reviewer's API call stores it)."""
    return annotation_memory(deps, config).add(
        description, {"description": description}, {"hed": hed}, verified_by="ana", source="api"
    )


# An AOMIC working-memory sidecar's two levels: MiniLM puts them at 0.97.
CHANGED = "display with oriented bars, which changed relative to the first display"
UNCHANGED = "display with oriented bars, which DIDN'T change relative to the first display"


def test_the_cascade_answers_a_sibling_by_analogy_with_no_model_call(settings) -> None:
    deps, config, model = _deps_config()
    verified, description, annotation = SIBLINGS[0][1], SIBLINGS[0][0], SIBLINGS[0][2]
    example = _verify(deps, config, verified, annotation)
    decision = STRATEGIES["cascade"](HedInput(description=description), deps, config)
    assert model.calls == 0 and decision.run.decided_by == "memory-analogy"
    assert decision.verdict == "VALID" and decision.annotation == "(Feedback, Incorrect-action)"
    assert examples_used(decision) == [example.id]
    assert (
        decision.reasoning.startswith(f"By analogy with example {example.id} (similarity 0.9")
        and "Correct-action -> Incorrect-action" in decision.reasoning
    )
    memory = decision.run.layers[0]
    assert memory.layer == "memory" and not memory.kept  # "incorrect" is no repeat of "correct"


def test_removing_the_sibling_removes_the_analogy(settings) -> None:
    deps, config, _ = _deps_config()
    verified, description, annotation = SIBLINGS[4][1], SIBLINGS[4][0], SIBLINGS[4][2]
    example = _verify(deps, config, verified, annotation)
    before = STRATEGIES["memory-analogy"](HedInput(description=description), deps, config)
    annotation_memory(deps, config).delete(example.id)
    after = STRATEGIES["memory-analogy"](HedInput(description=description), deps, config)
    assert (before.verdict, before.annotation) == (
        "VALID",
        "Agent-action, (Press, Push-button), (Deny, Label/Area_access)",
    )
    assert (after.verdict, after.confidence, after.final_status) == (
        "NEEDS_REVIEW",
        0.0,
        "no verified sibling",
    )


def test_the_memory_leaves_a_near_sibling_to_the_analogy(settings) -> None:
    # MiniLM puts "light blue" and "dark blue" squares at 0.98: the memory alone took the
    # dark one's DarkBlue for the light one (confidence 95, the 7 Dec learning run)
    deps, config, model = _deps_config()
    description, verified, annotation, expected = SIBLINGS[1]
    example = _verify(deps, config, verified, annotation)
    decision = STRATEGIES["cascade"](HedInput(description=description), deps, config)
    memory = decision.run.layers[0]
    assert (memory.layer, memory.verdict, memory.confidence) == ("memory", "NEEDS_REVIEW", 0.0)
    assert memory.output["reasoning"] == (
        f"Example {example.id} is near but differs in words its annotation names "
        "(LightBlue -> DarkBlue): the analogy layer's case."
    )
    assert model.calls == 0 and decision.run.decided_by == "memory-analogy"
    assert decision.annotation == expected


def test_the_memory_does_not_take_a_negated_description_for_a_repeat(settings) -> None:
    # an AOMIC working-memory sidecar's levels: MiniLM puts them at 0.97, and the memory took
    # Label/Active-change for the unchanged display (confidence 97, the 7 Dec learning run)
    deps, config, _ = _deps_config()
    example = _verify(deps, config, CHANGED, "Label/Active-change")
    decision = STRATEGIES["memory"](HedInput(description=UNCHANGED), deps, config)
    assert (decision.verdict, decision.confidence) == ("NEEDS_REVIEW", 0.0)
    assert decision.reasoning == (
        f"Example {example.id} is near but one of the two negates where the other does not: "
        "not a repeat."
    )
    assert [negations(t) for t in (CHANGED, UNCHANGED, "No display, never without")] == [
        0,
        1,
        3,
    ]


def test_a_negated_neighbour_makes_the_model_no_surer(settings) -> None:
    # the same AOMIC pair: the memory passes the case on, and the bundled model's valid answer
    # (60, its threshold) is scaled as far from every verified description, so a person sees it
    model = ScriptedChatModel(steps=[say("Label/Passive-display")], model_name="scripted-local")
    deps = HedDeps(settings=get_settings(), validator="python")
    config = RunConfig(models=RoleModels.given(model))
    _verify(deps, config, CHANGED, "Label/Active-change")
    decision = STRATEGIES["cascade"](HedInput(description=UNCHANGED), deps, config)
    local = next(o for o in decision.run.layers if o.layer == "local")
    assert model.calls == 1 and (local.verdict, local.confidence) == ("VALID", 30.0)
    assert local.output["reasoning"].endswith(
        "Confidence 60 -> 30: each of the nearest verified descriptions negates where this "
        "one does not."
    )
    assert decision.verdict == "NEEDS_REVIEW" and decision.annotation == "Label/Passive-display"
