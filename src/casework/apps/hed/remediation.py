"""Error augmentation: what each HED error code means, how to fix it, the closest valid tags.

Validators speak to people; the annotation model needs to be told what to change. For each
issue we add the code's explanation and remedy and, where a tag is at fault, the closest
schema tags by fuzzy match (rapidfuzz) and the allowed units. Deterministic, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils

from casework.apps.hed.validation import Issue
from casework.apps.hed.vocabulary import Vocabulary

__all__ = ["REMEDIES", "Remedy", "augment", "augment_all", "closest_tags", "faulty_term"]

CLOSEST_LIMIT = 3
CLOSEST_MIN_SCORE = 60.0
"""rapidfuzz token-set ratio (0-100) below which a schema tag is not offered as a replacement."""


def _words(name: str) -> str:
    # Compare words, not hyphenated strings: "Auditory-event" shares "event" with "Sensory-event".
    return utils.default_process(name.replace("-", " "))


@dataclass(frozen=True)
class Remedy:
    what: str
    fix: str


# The HED specification's error codes (Appendix B) the validators report.
REMEDIES: dict[str, Remedy] = {
    "TAG_INVALID": Remedy(
        "The tag is not in the HED schema and is not a valid extension of a schema tag.",
        "Use a tag from the vocabulary (short form, e.g. `Circle`), or extend a schema tag as "
        "`Parent/New-term` when nothing fits.",
    ),
    "TAG_EXTENSION_INVALID": Remedy(
        "The tag extends a schema tag with a term that is already in the schema, or extends "
        "a tag that does not allow extension.",
        "Use the existing schema term on its own, or extend a different parent.",
    ),
    "TAG_EXTENDED": Remedy(
        "The tag extends the schema (a warning): tools that only know the schema will not "
        "understand the new term.",
        "Prefer an existing schema tag if one fits.",
    ),
    "UNITS_INVALID": Remedy(
        "The value has a unit the tag's unit class does not allow.",
        "Write the value with one of the allowed units, e.g. `Duration/2 s`.",
    ),
    "VALUE_INVALID": Remedy(
        "The value does not fit the tag's value class (a number where a number is required, "
        "a name without spaces or special characters).",
        "Write a plain number (with a unit where one is allowed) or a name using letters, "
        "digits, hyphens and underscores only.",
    ),
    "CHARACTER_INVALID": Remedy(
        "The string contains a character not allowed here (often a space inside a tag name "
        "or value, or a non-ASCII character).",
        "Separate tags with commas, join words with hyphens, and use ASCII only.",
    ),
    "COMMA_MISSING": Remedy(
        "Two tags or groups are not separated by a comma.",
        "Put a comma between every pair of tags and groups, e.g. `Red, (Circle, Large)`.",
    ),
    "PARENTHESES_MISMATCH": Remedy(
        "Opening and closing parentheses do not match.",
        "Close every `(` with a `)`; count them before answering.",
    ),
    "TAG_EMPTY": Remedy(
        "There is an empty tag: two commas in a row, a comma at an end, or empty parentheses.",
        "Remove the extra comma or the empty group.",
    ),
    "TAG_EXPRESSION_REPEATED": Remedy(
        "The same tag appears twice at the same level.",
        "Keep each tag once per group; put repeated properties in separate groups.",
    ),
    "TAG_GROUP_ERROR": Remedy(
        "A tag that must sit in a top-level group (Onset, Offset, Duration, Delay, "
        "Definition) is elsewhere, or a group breaks a grouping rule.",
        "Put such tags inside a parenthesised group at the top level, e.g. "
        "`(Duration/2 s, (Sensory-event, Beep))`, or leave them out.",
    ),
    "TEMPORAL_TAG_ERROR": Remedy(
        "A temporal tag (Onset, Offset, Inset, Duration, Delay) is used outside a top-level "
        "group or without the definition it needs.",
        "Leave temporal tags out unless asked for, or write `(Duration/2 s, (...))` as a "
        "top-level group.",
    ),
    "TAG_REQUIRES_CHILD": Remedy(
        "The tag needs a value or child, e.g. `Label/Start`.",
        "Add a value after a slash, or use another tag.",
    ),
    "DEF_INVALID": Remedy(
        "`Def/` names a definition that does not exist in this annotation's context.",
        "Do not use Def, Def-expand or Definition tags; describe the event with plain tags.",
    ),
    "DEF_EXPAND_INVALID": Remedy(
        "`Def-expand/` names or expands a definition that does not exist.",
        "Do not use Def, Def-expand or Definition tags; describe the event with plain tags.",
    ),
    "DEFINITION_INVALID": Remedy(
        "A definition is malformed or used where definitions are not allowed.",
        "Do not use Def, Def-expand or Definition tags; describe the event with plain tags.",
    ),
    "TAG_NOT_UNIQUE": Remedy(
        "A tag that may appear only once in an annotation appears more than once.",
        "Keep one occurrence.",
    ),
    "TAG_NAMESPACE_PREFIX_INVALID": Remedy(
        "The tag has a library prefix (`xx:`) that no loaded schema declares.",
        "Remove the prefix and use standard schema tags.",
    ),
    "ELEMENT_DEPRECATED": Remedy(
        "The tag is deprecated in this schema version.",
        "Use the tag the schema recommends instead (see the closest tags).",
    ),
}
TAG_LEVEL_CODES = ("TAG_INVALID", "TAG_EXTENSION_INVALID", "ELEMENT_DEPRECATED", "TAG_EXTENDED")
"""Codes about one tag's name: the closest schema tags are offered as replacements."""
GENERIC = Remedy("The validator reported this error.", "Rewrite the part it points at.")

_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")


def faulty_term(issue: Issue) -> str:
    """The tag an issue is about: the issue's tag, else the first quoted text in its message."""
    if issue.tag:
        return issue.tag
    match = _QUOTED.search(issue.message)
    return match.group(1) if match else ""


def closest_tags(term: str, vocab: Vocabulary, *, limit: int = CLOSEST_LIMIT) -> list[str]:
    """Schema tags closest to ``term``'s last segment, best first: an exact name, else the
    rapidfuzz token-set ratio over hyphen-separated words, ties broken by whole-name ratio."""
    word = term.strip().strip("()").split("/")[-1].strip()
    if not word:
        return []
    exact = vocab.tags.get(word.lower())
    if exact:
        return [exact.short]
    found = process.extract(
        word,
        vocab.names,
        scorer=fuzz.token_set_ratio,
        processor=_words,
        limit=limit * 4,
        score_cutoff=CLOSEST_MIN_SCORE,
    )
    # Token-set ties are common ("Screen" is in both Computer-screen and Screen-resolution):
    # break them by plain similarity of the whole name.
    key = _words(word)
    ranked = sorted(found, key=lambda f: (-f[1], -fuzz.ratio(key, _words(f[0])), f[2]))
    return [name for name, _score, _i in ranked[:limit]]


def augment(issue: Issue, vocab: Vocabulary) -> str:
    """One issue as the annotation model reads it: code, message, what is wrong, the fix,
    and (for tag-level codes) the closest valid tags or the allowed units."""
    remedy = REMEDIES.get(issue.code, GENERIC)
    lines = [f"[{issue.code}] {issue.message}", f"  What is wrong: {remedy.what}"]
    lines.append(f"  How to fix: {remedy.fix}")
    term = faulty_term(issue)
    if issue.code in ("UNITS_INVALID", "VALUE_INVALID") and term:
        info = vocab.get(term)
        if info and info.units:
            lines.append(f"  Allowed units for {info.short}: {', '.join(info.units)}")
    elif issue.code in TAG_LEVEL_CODES and term:
        suggestions = closest_tags(term, vocab)
        if suggestions:
            lines.append(f"  Closest valid tags for '{term}': {', '.join(suggestions)}")
    return "\n".join(lines)


def augment_all(issues: list[Issue], vocab: Vocabulary) -> list[str]:
    return [augment(issue, vocab) for issue in issues]
