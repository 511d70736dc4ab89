"""The bundled model's short prompt (the rules and the few schema entries the case and its
examples point to, not the whole vocabulary) and the cascade's confidence on a description far
from every verified annotation. Scripted models; examples embedded with the bundled MiniLM."""

from __future__ import annotations

from casework.apps.hed.deps import HedDeps
from casework.apps.hed.memory import annotation_memory
from casework.apps.hed.models import HedInput
from casework.apps.hed.shortprompt import entries_text, prompt_tags
from casework.apps.hed.strategies import STRATEGIES
from casework.apps.hed.vocabulary import estimate_tokens, load_vocabulary
from casework.config import get_settings
from casework.llm import RoleModels, ScriptedChatModel, say
from casework.runtime import RunConfig

CHECKERBOARD = "A checkerboard pattern slowly fills the whole screen."  # the look-up is unsure
MODEL = "Sensory-event, Visual-presentation, (Pattern, Computer-screen)"
FEEDBACK = "Feedback that the last participant response was correct."  # far: MiniLM 0.0x


def _run(steps):
    """(deps, config, the messages of each model call)."""
    seen: list[list[str]] = []

    def seeing(message):
        return lambda messages: seen.append([str(m.content) for m in messages]) or message

    model = ScriptedChatModel(steps=[seeing(m) for m in steps], model_name="scripted-local")
    deps = HedDeps(settings=get_settings(), validator="python")
    return deps, RunConfig(models=RoleModels.given(model)), seen


def _verify(deps, config, description: str, hed: str) -> int:
    memory = annotation_memory(deps, config)
    inputs = {"description": description}
    return memory.add(description, inputs, {"hed": hed}, verified_by="ana", source="api").id


def test_the_entries_are_the_look_ups_then_the_examples_then_the_words_name_parts():
    vocab = load_vocabulary("8.3.0")
    tags = prompt_tags(
        "Participant correctly indicated that the probe was a target.",
        ["(Feedback, Correct-action)", "Label/Indicate-ready"],
        vocab,
    )
    assert tags == [
        "Agent-action",
        "Participant-response",
        "Experiment-participant",
        "Target",
        "Feedback",
        "Correct-action",
        "Label",
        "Correct",  # "correctly"; Correct-action is listed already
        "Non-target",  # "target"
    ]
    assert prompt_tags("A beep sounds.", [], vocab, limit=2) == [
        "Sensory-event",
        "Auditory-presentation",
    ]
    text = entries_text(["Correct-action", "Duration", "No-such-tag"], vocab)
    assert text.splitlines() == [
        "- Correct-action: An action that was a correct response in the context of the task",
        "- Duration/<value second|s|day|month>: The period of time during which an event occurs",
    ]


def test_the_bundled_models_prompt_shows_the_entries_not_the_vocabulary(settings):
    deps, config, seen = _run([say(MODEL)])
    _verify(deps, config, "A checkerboard pattern fills the screen.", "(Black, White, Pattern)")
    decision = STRATEGIES["cascade"](HedInput(description=CHECKERBOARD), deps, config)
    assert decision.run.decided_by == "local"
    system, task = seen[0]
    assert "HED annotation rules:" in system and "Vocabulary (" not in system
    assert "Schema entries this event and its examples point to" in task
    listed = [line.split(":")[0][2:] for line in task.splitlines() if line.startswith("- ")]
    assert listed[:4] == ["Sensory-event", "Visual-presentation", "Pattern", "Computer-screen"]
    assert listed[4:6] == ["Black", "White"]  # named by the example's annotation only
    assert estimate_tokens(system + task) < 1000  # the whole-vocabulary prompt is ~3,700


def test_the_short_system_turn_is_the_same_for_every_case_so_a_warm_start_keeps_it(settings):
    deps, config, seen = _run([say(MODEL), say(MODEL)])
    for description in (CHECKERBOARD, "A grey noise texture slowly covers the whole display."):
        STRATEGIES["cascade"](HedInput(description=description), deps, config)
    assert seen[0][0] == seen[1][0] and len(seen[0][0]) >= 1500  # warm.OPENING_CHARS
    assert seen[0][1] != seen[1][1]


def test_a_description_far_from_every_verified_one_goes_to_a_person(settings):
    deps, config, _ = _run([say(MODEL)])
    alone = STRATEGIES["cascade"](HedInput(description=CHECKERBOARD), deps, config)
    assert (alone.verdict, alone.confidence, alone.run.decided_by) == ("VALID", 60.0, "local")

    deps, config, _ = _run([say(MODEL)])
    _verify(deps, config, FEEDBACK, "(Feedback, Correct-action)")
    far = STRATEGIES["cascade"](HedInput(description=CHECKERBOARD), deps, config)
    local = next(o for o in far.run.layers if o.layer == "local")
    assert far.verdict == "NEEDS_REVIEW" and not local.kept
    assert local.confidence == 30.0  # novelty_confidence(60, nearest <= 0.25)
    assert far.annotation == MODEL  # the draft a person reviews
