"""The no-model baseline: a vocabulary look-up of the description's words, validated.

Every word (and every pair of neighbouring words joined by a hyphen, as the schema joins
them: "mouse button" -> ``Mouse-button``) that names a schema tag becomes that tag; an event
type and a presentation tag come from cue words. The tags stay flat (no grouping: the
baseline cannot tell which words describe the same thing), and tags the validator rejects are
dropped. It is the floor the agent loop must beat on the evaluation's tag F1, and it needs
neither a model nor the network.
"""

from __future__ import annotations

import re

from casework.apps.hed.vocabulary import Vocabulary

__all__ = ["CUE_WORDS", "candidate_tags", "coverage", "lookup_annotation"]

_WORD = re.compile(r"[a-z][a-z0-9-]*")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Cue words for the parts of an annotation that are rarely spelled out as tag names.
CUE_WORDS: dict[str, frozenset[str]] = {
    "visual": _words(
        "screen display displayed appears appear shown shows flash flashes image picture "
        "video monitor visible light"
    ),
    "auditory": _words(
        "tone beep sound sounds hear heard audio voice noise speaker speakers headphones played"
    ),
    "action": _words(
        "press presses pressed click clicks clicked respond responds response button key "
        "moves move reaches grasps says speaks looks"
    ),
    "control": _words(
        "begins begin starts start ends end stops stop pause paused resumes block recording "
        "experiment session"
    ),
}

_AGENTS = _words("participant subject experimenter person he she they")

# Words that name a schema tag but carry no meaning of their own in a description; "played"
# is a sound presented ("a tone is played"), not the action Play.
_SKIP = _words("a an the on in of to is are and or it at by with as played")

# Everyday words and phrases for tags the schema names otherwise. Directions follow the
# schema's own descriptions: "to the left" is a movement (Leftward), "the left side of" a
# relative place (Left-side-of, matched as a three-word tag), "the left hand" an identity (Left).
_PHRASES: dict[tuple[str, ...], str] = {
    ("screen",): "Computer-screen",
    ("monitor",): "Computer-screen",
    ("display",): "Display-device",
    ("speaker",): "Loudspeaker",
    ("speakers",): "Loudspeaker",
    ("middle", "of"): "Center-of",
    ("to", "the", "left"): "Leftward",
    ("to", "the", "right"): "Rightward",
    ("pointing", "left"): "Leftward",
    ("pointing", "right"): "Rightward",
}
_PHRASE_WORDS = frozenset(w for phrase in _PHRASES for w in phrase)
_COVERED = frozenset().union(*CUE_WORDS.values()) | _AGENTS | _PHRASE_WORDS
"""Words the look-up accounts for without the schema: cue words, actors, phrase words."""


def _variants(word: str) -> list[str]:
    """The word and its plain singular / stem forms (``circles`` -> ``circle``)."""
    forms = [word]
    if word.endswith("es") and len(word) > 4:
        forms.append(word[:-2])
    if word.endswith("s") and len(word) > 3:
        forms.append(word[:-1])
    if word.endswith("ed") and len(word) > 4:
        forms += [word[:-2], word[:-1]]
    return forms


def _tag(forms: list[str], vocab: Vocabulary) -> str | None:
    for form in forms:
        info = vocab.tags.get(form)
        if info is not None and not info.takes_value and not info.requires_child:
            return info.short
    return None


def candidate_tags(description: str, vocab: Vocabulary) -> list[str]:
    """Schema tags named by the description's phrases, word triples and pairs, and words, in
    the description's order, once each. A word inside a matched phrase ("mouse" in
    ``Mouse-button``) is not matched again; tags that take a value are left out (the
    baseline cannot read values)."""
    words = _WORD.findall(description.lower())
    found: dict[str, int] = {}  # tag -> where its words start
    used: set[int] = set()

    def take(tag: str, span: range) -> None:
        used.update(span)
        found.setdefault(tag, span.start)

    for phrase, named in _PHRASES.items():
        for i in range(len(words) - len(phrase) + 1):
            span = range(i, i + len(phrase))
            if tuple(words[i : i + len(phrase)]) == phrase and not used & set(span):
                take(named, span)
    for size in (3, 2):  # "left side of" -> Left-side-of, "mouse button" -> Mouse-button
        for i in range(len(words) - size + 1):
            span = range(i, i + size)
            if used & set(span):
                continue
            rest = "-".join(words[i + 1 : i + size])
            if (joined := _tag([f"{f}-{rest}" for f in _variants(words[i])], vocab)) is not None:
                take(joined, span)
    for i, word in enumerate(words):
        if i in used or word in _SKIP:
            continue
        if (single := _tag(_variants(word), vocab)) is not None:
            found.setdefault(single, i)
    return sorted(found, key=found.__getitem__)  # in the description's order


# Words that carry no tag of their own in a description (besides ``_SKIP``).
_FUNCTION_WORDS = _words(
    "be been being was were has have had do does did this that these those there then than "
    "from for into onto up down out over under again after before when while which who whom "
    "what where why how all any each every some no not only very can will would should may "
    "his her their its our your one two three first second next"
)


def coverage(description: str, vocab: Vocabulary) -> float:
    """The share of the description's content words the look-up turned into tags or cues:
    how much of what is said the baseline's annotation can account for (its confidence)."""
    words = [w for w in _WORD.findall(description.lower()) if w not in _SKIP | _FUNCTION_WORDS]
    if not words:
        return 0.0
    covered = 0
    for i, word in enumerate(words):
        pairs = [f"{f}-{n}" for f in _variants(word) for n in words[i + 1 : i + 2]]
        pairs += [f"{f}-{word}" for f in _variants(words[i - 1])] if i else []
        if word in _COVERED or _tag(_variants(word), vocab) or _tag(pairs, vocab):
            covered += 1
    return covered / len(words)


def lookup_annotation(description: str, vocab: Vocabulary) -> str:
    """The baseline's HED string for a description (not yet validated)."""
    said = _WORD.findall(description.lower())
    words = set(said)
    sensory = words & (CUE_WORDS["visual"] | CUE_WORDS["auditory"])
    if words & CUE_WORDS["action"] and not sensory:
        event = "Agent-action"
    elif words & CUE_WORDS["control"] and not sensory:
        event = "Experiment-control"
    elif sensory or not words & _AGENTS:
        event = "Sensory-event"
    else:  # someone does something the cue words do not know
        event = "Agent-action"
    tags = [event]
    actor = next((w for w in said if w in _AGENTS), None)
    if event == "Agent-action" and actor in {"participant", "subject"}:  # the participant acts
        tags += ["Participant-response", "Experiment-participant"]
    if event == "Sensory-event":
        if words & CUE_WORDS["auditory"]:
            tags.append("Auditory-presentation")
        if words & CUE_WORDS["visual"] or len(tags) == 1:
            tags.append("Visual-presentation")
    tags += [t for t in candidate_tags(description, vocab) if t not in tags]
    return ", ".join(tags)
