"""The annotation grammar built from the schema, the look-up's coverage, and the cascade
with scripted models (which layer decides, and what the next layer is shown)."""

from __future__ import annotations

import re

import pytest

from casework.apps.hed.baseline import candidate_tags, coverage, lookup_annotation
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.grammar import annotation_grammar, grammar_tags
from casework.apps.hed.models import HedInput
from casework.apps.hed.strategies import STRATEGIES
from casework.apps.hed.vocabulary import load_vocabulary
from casework.config import get_settings
from casework.llm import RoleModels, ScriptedChatModel, say
from casework.runtime import RunConfig


def test_the_grammar_names_only_schema_tags_and_leaves_out_the_ones_needing_context():
    grammar = annotation_grammar("8.3.0")
    vocab = load_vocabulary("8.3.0")
    bare = re.search(r"^bare ::= (.*)$", grammar, re.M)
    assert bare is not None
    names = re.findall(r'"([^"]+)"', bare.group(1))
    assert len(names) > 900 and all(n.lower() in vocab.tags for n in names)
    assert {"Red", "Circle", "Sensory-event", "Computer-screen"} <= set(names)
    for needs_context in ("Onset", "Offset", "Def", "Definition", "Duration"):
        assert needs_context not in names and f'"{needs_context}/"' not in grammar
    # a value tag takes a number and only its own units
    assert '"Frequency/" number (" " unit-frequency)?' in grammar
    assert re.search(r'^unit-frequency ::= "hertz" \| "Hz"', grammar, re.M)
    bare_tags, valued = grammar_tags("8.3.0")
    assert not {t.short for t in bare_tags} & {t.short for t in valued}
    assert annotation_grammar("8.3.0") is grammar  # built once per process


def test_coverage_is_the_share_of_content_words_the_look_up_accounts_for():
    vocab = load_vocabulary("8.3.0")
    assert coverage("Three red dots appear on the screen.", vocab) == 1.0
    assert coverage("A checkerboard pattern fills the screen.", vocab) == pytest.approx(0.5)
    assert coverage("the of a", vocab) == 0.0


def test_the_look_up_names_who_acts_and_how_a_sound_is_presented() -> None:
    vocab = load_vocabulary("8.3.0")
    spoken = lookup_annotation("The experimenter speaks to the participant.", vocab)
    assert spoken == "Agent-action, Experimenter, Speak"  # not a participant response
    pressed = lookup_annotation("The participant presses the left mouse button.", vocab)
    assert pressed.startswith("Agent-action, Participant-response, Experiment-participant")
    chord = lookup_annotation("A musical chord is played on a piano.", vocab)
    assert chord.startswith("Sensory-event, Auditory-presentation")


@pytest.mark.parametrize(
    ("description", "tags"),
    [
        # a relative place is a three-word tag; "screen" is the schema's Computer-screen
        (
            "A green square is shown on the left side of the screen.",
            ["Green", "Square", "Left-side-of", "Computer-screen"],
        ),
        # a movement is Leftward; "played" presents a sound, it is not the action Play
        ("The avatar turns its head to the left.", ["Turn", "Head", "Leftward"]),
        ("A quiet tone is played through the speakers.", ["Quiet", "Tone", "Loudspeaker"]),
        # the identity of a hand stays Left, as the schema's description says
        (
            "The participant grasps the joystick with the left hand.",
            ["Grasp", "Joystick", "Left", "Hand"],
        ),
        (
            "A sphere is shown in the middle of the display.",
            ["Sphere", "Center-of", "Display-device"],
        ),
    ],
)
def test_the_look_up_reads_phrases_in_the_descriptions_order(description: str, tags: list[str]):
    assert candidate_tags(description, load_vocabulary("8.3.0")) == tags


def deps_with(model: ScriptedChatModel) -> tuple[HedDeps, RunConfig]:
    """The deps and a run config on ``model``: ``STRATEGIES[s](input, *deps_with(model))``."""
    return HedDeps(settings=get_settings(), validator="python"), RunConfig(
        models=RoleModels.given(model)
    )


def test_the_cascade_keeps_the_look_up_when_it_covers_the_description():
    model = ScriptedChatModel(steps=[])
    decision = STRATEGIES["cascade"](
        HedInput(description="Three red dots appear on the screen."), *deps_with(model)
    )
    assert model.calls == 0 and decision.run.decided_by == "rules"
    assert decision.verdict == "VALID" and "Red" in decision.annotation


def test_the_cascade_asks_the_model_with_the_look_up_as_a_draft_when_it_is_not_sure():
    seen: list[str] = []

    def annotate(messages, tools):
        seen.append(str(messages[-1].content))
        return say("Sensory-event, Visual-presentation, (Pattern, Computer-screen)")

    model = ScriptedChatModel(responder=annotate, model_name="scripted-local")
    description = "A checkerboard pattern slowly fills the whole screen."
    decision = STRATEGIES["cascade"](HedInput(description=description), *deps_with(model))
    layers = decision.run.layers
    assert [o.layer for o in layers][:4] == ["memory", "memory-analogy", "rules", "local"]
    assert layers[2].confidence == 33.3 and not layers[2].kept  # under half the words
    assert "A word look-up found: Sensory-event, Visual-presentation" in seen[0]
    assert decision.annotation == "Sensory-event, Visual-presentation, (Pattern, Computer-screen)"


def test_an_invalid_model_annotation_never_replaces_the_valid_look_up():
    # a tag repeated in a group: the grammar cannot forbid it (the scripted model stands for
    # a remote one too, and has nothing more to say when the loop asks it to repair)
    model = ScriptedChatModel(
        steps=[say("Sensory-event, (Visual-presentation, Visual-presentation)")],
        model_name="scripted-local",
    )
    description = "A checkerboard pattern slowly fills the whole screen."
    decision = STRATEGIES["cascade"](HedInput(description=description), *deps_with(model))
    assert [(o.layer, o.verdict) for o in decision.run.layers][:4] == [
        ("memory", "NEEDS_REVIEW"),
        ("memory-analogy", "NEEDS_REVIEW"),
        ("rules", "VALID"),
        ("local", "INVALID"),
    ]
    assert decision.verdict == "NEEDS_REVIEW" and decision.is_valid
    assert "Visual-presentation, Visual-presentation" not in decision.annotation
    assert "the rules layer's valid annotation stands" in decision.reasoning
