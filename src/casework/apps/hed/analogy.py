"""Analogy from a verified sibling: a description that differs from a verified one by a word
or two in the same places takes the verified annotation with those words' tags swapped.

The levels of one sidecar column are siblings ("feedback that the response was correct" /
"... incorrect", "focus on auditory stimuli" / "... visual stimuli", "a 550 Hz tone" / "a 500
Hz tone"), and their authors annotate them alike: ``(Feedback, Correct-action)`` /
``(Feedback, Incorrect-action)``. The swap is deterministic. The two descriptions' content
words are aligned (``difflib``); every difference must be a word replaced by another in the
same place (a word only added or only dropped changes what is said in a way no swap can
follow), and at least as many words must be shared as replaced. A tag of the verified
annotation that names the old word (a part of its name or of its value: ``correct`` in
``Correct-action``, ``right`` in ``Rightward``) is rewritten with the new word, and the
rewritten name must be a schema tag (a value may change freely: ``Frequency/550 Hz`` ->
``Frequency/500 Hz``). A pair whose old word the annotation does not name is one its author
left unannotated, so the new word stays so too, if it is no more a tag than the old one
(``Left perturbation ...`` / ``Right perturation ...``, both ``(Experiment-control,
Mishap)``). "not" added or dropped, alone, turns ``Target`` into ``Non-target`` and back.
Descriptions with the same content words are the memory layer's, not an analogy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from casework.apps.hed.vocabulary import Vocabulary

__all__ = ["MAX_CHANGED", "Analogy", "analogy", "content_words", "negations"]

MAX_CHANGED = 2
"""At most this many words may be replaced: beyond it the descriptions are not siblings."""
KEPT_COST = 5.0
"""Confidence points a pair of unannotated words costs (the author's silence is weaker
evidence than a tag swapped)."""

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    _WORD.findall(
        "a an the of to that this these those is are was were be been being it its in on at "
        "by for with as and or from into which who"
    )
)
_NEGATION = "not"
_NEGATIONS = re.compile(r"\b(?:not|no|never|without)\b|n['’]t\b")
_TOKEN = re.compile(r"[^,()]+")
_CAMEL = re.compile(r"[A-Z][a-z0-9]*|[a-z0-9]+")


@dataclass(frozen=True)
class Analogy:
    """A verified annotation rewritten for a sibling description."""

    annotation: str
    swaps: tuple[tuple[str, str], ...]
    """(the verified tag, its rewrite), in the annotation's order."""
    kept: tuple[tuple[str, str], ...]
    """(old word, new word) pairs the verified annotation does not name: left as they are."""

    def confidence(self, similarity: float) -> float:
        """The similarity of the two descriptions, less ``KEPT_COST`` per unannotated pair."""
        return round(max(0.0, 100.0 * similarity - KEPT_COST * len(self.kept)), 2)


def content_words(text: str) -> list[str]:
    """The description's words in order, once each, without function words."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOP:
            seen.setdefault(word, None)
    return list(seen)


def negations(text: str) -> int:
    """How many times the text negates ("not", "no", "never", "without", "didn't"): MiniLM
    puts "which changed" and "which DIDN'T change" at 0.97, so the memory compares these."""
    return len(_NEGATIONS.findall(text.lower()))


def _parts(name: str) -> list[str]:
    """A tag name's or value's words: ``Correct-action`` -> correct, action; ``DarkBlue`` ->
    dark, blue; ``550 Hz`` -> 550, hz."""
    return [p.lower() for piece in re.split(r"[-_ /]+", name) for p in _CAMEL.findall(piece)]


def _stem_match(part: str, word: str) -> tuple[str, str] | None:
    """How a tag's part names a word: ("", "") equal; ("word", suffix) when the word adds a
    suffix to the part ("correct", "correctly" -> "ly"); ("part", suffix) when the part adds
    one to the word ("rightward", "right" -> "ward"). None: it does not name it."""
    if part == word:
        return ("", "")
    if len(part) >= 4 and word.startswith(part) and len(word) - len(part) <= 3:
        return ("word", word[len(part) :])
    if len(word) >= 4 and part.startswith(word) and len(part) - len(word) <= 4:
        return ("part", part[len(word) :])
    return None


def _renamed(part: str, old: str, new: str) -> str | None:
    """The part naming ``old`` renamed for ``new`` (None: it does not name ``old``, or
    ``new`` lacks the old word's suffix), in the part's casing."""
    match = _stem_match(part.lower(), old)
    if match is None:
        return None
    side, suffix = match
    if side == "word":
        if not new.endswith(suffix):
            return None
        stem = new[: len(new) - len(suffix)]
    else:
        stem = new + suffix
    return stem.capitalize() if part[:1].isupper() else stem


def _rewrite(piece: str, old: str, new: str) -> str | None:
    """``piece`` with its first part naming ``old`` renamed for ``new``; None when none can
    be."""
    segments = re.split(r"([-_ /]+)", piece)
    for i, segment in enumerate(segments):
        if re.fullmatch(r"[-_ /]*", segment):
            continue
        parts = _CAMEL.findall(segment)
        for j, part in enumerate(parts):
            renamed = _renamed(part, old, new)
            if renamed is not None:
                segments[i] = "".join([*parts[:j], renamed, *parts[j + 1 :]])
                return "".join(segments)
    return None


def _swap(token: str, old: str, new: str, vocab: Vocabulary) -> str | None:
    """One tag of the annotation rewritten from ``old`` to ``new``: a value (after the
    first ``/``) changes freely; a name must stay a schema tag (its casing the schema's)."""
    name, slash, value = token.partition("/")
    info = vocab.get(name) if slash else None
    if info is not None and info.takes_value:
        rewritten = _rewrite(value, old, new)
        return f"{name}/{rewritten}" if rewritten is not None else None
    rewritten = _rewrite(token, old, new)
    named = vocab.tags.get(rewritten.lower()) if rewritten is not None else None
    return named.short if named is not None else None


def _replaced(token: str, replace: dict[str, str]) -> str:
    """A token of the annotation with its rewrite, its surrounding spaces kept."""
    name = token.strip()
    return token.replace(name, replace[name]) if name in replace else token


def _is_tag(word: str, vocab: Vocabulary) -> bool:
    """The word (or its singular) names a schema tag."""
    forms = [word, word[:-1]] if word.endswith("s") and len(word) > 3 else [word]
    return any(vocab.tags.get(form) is not None for form in forms)


def _names(token: str, word: str) -> bool:
    return any(_stem_match(p, word) is not None for p in _parts(token))


def _negated(tokens: list[str], add: bool, vocab: Vocabulary) -> dict[str, str] | None:
    """``Target`` -> ``Non-target`` (``add``) or back: the one token that has such a form."""
    found = {}
    for token in tokens:
        if add:
            info = vocab.tags.get(f"non-{token.lower()}")
        else:
            info = vocab.tags.get(token.lower()[4:]) if token.lower().startswith("non-") else None
        if info is not None:
            found[token] = info.short
    return found if len(found) == 1 else None


def _pairs(theirs: list[str], ours: list[str]) -> list[tuple[str, str]] | None:
    """The differing words aligned (``difflib``), each a word replaced by another in the
    same place: (old, new). None when a word is only added or only dropped, or fewer words
    are shared than replaced."""
    pairs: list[tuple[str, str]] = []
    shared = 0
    for op, i1, i2, j1, j2 in SequenceMatcher(a=theirs, b=ours, autojunk=False).get_opcodes():
        if op == "equal":
            shared += i2 - i1
        elif op == "replace" and i2 - i1 == j2 - j1:
            pairs += zip(theirs[i1:i2], ours[j1:j2], strict=True)
        else:
            return None
    return pairs if shared >= len(pairs) else None


def analogy(description: str, verified: str, annotation: str, vocab: Vocabulary) -> Analogy | None:
    """The verified ``annotation`` of the ``verified`` description rewritten for
    ``description`` (see the module's doc), or None when the two are not siblings."""
    ours, theirs = content_words(description), content_words(verified)
    tokens = [t.strip() for t in _TOKEN.findall(annotation) if t.strip()]
    replace: dict[str, str] = {}
    if (_NEGATION in ours) != (_NEGATION in theirs):
        flipped = _negated(tokens, _NEGATION in ours, vocab)
        if flipped is None:
            return None
        replace.update(flipped)
        ours = [w for w in ours if w != _NEGATION]
        theirs = [w for w in theirs if w != _NEGATION]
    pairs = _pairs(theirs, ours)
    if pairs is None or len(pairs) > MAX_CHANGED or not (pairs or replace):
        return None
    kept: list[tuple[str, str]] = []
    for old, new in pairs:
        naming = [t for t in tokens if _names(t, old)]
        if not naming:
            if _is_tag(new, vocab) and not _is_tag(old, vocab):
                return None  # the old word was no tag to annotate, the new one is
            kept.append((old, new))
            continue
        for token in naming:
            swapped = _swap(replace.get(token, token), old, new, vocab)
            if swapped is None:
                return None
            replace[token] = swapped
    rewritten = _TOKEN.sub(lambda m: _replaced(m.group(0), replace), annotation)
    swaps = tuple((t, replace[t]) for t in tokens if t in replace and replace[t] != t)
    return Analogy(rewritten, swaps, tuple(kept))
