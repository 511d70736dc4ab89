"""Deterministic HED domain rules: limits, input checks, the HED rules text, tag parsing.

Everything here is a pure function or a constant, tested directly; the agents and the
metrics call it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from casework.apps.hed.models import MAX_DESCRIPTION_CHARS
from casework.errors import InputError

__all__ = [
    "ANNOTATED_LEVELS_MAX",
    "HED_RULES",
    "MAX_TOTAL_ITERATIONS",
    "MAX_VALIDATION_ATTEMPTS",
    "NOT_ANNOTATED_COLUMNS",
    "Group",
    "Outcome",
    "categorical_levels",
    "check_description",
    "clean_annotation",
    "defined_names",
    "drop_repeats_across_columns",
    "flatten_tags",
    "level_description",
    "outcome",
    "parse_hed",
    "row_hed_strings",
    "split_top_level",
]

MAX_VALIDATION_ATTEMPTS = 5
"""Annotate-validate rounds with an invalid result before the run ends as max_attempts_reached."""
MAX_TOTAL_ITERATIONS = 10
"""Annotation calls in one run (validation and faithfulness loops together)."""
MAX_ANNOTATION_CHARS = 2000
"""Model output beyond this is cut before validation (a runaway generation)."""

HED_RULES = """\
HED annotation rules:
1. Write tags in short form: the tag's own name only, never its parent path (`Circle`, not
   `Item/Object/Geometric-object/2D-shape/Ellipse/Circle`).
2. Separate tags and groups with commas. Use only tags from the vocabulary; join words with
   hyphens as the vocabulary does (`Sensory-event`, `Mouse-button`).
3. Start with an event type: Sensory-event, Agent-action, Experiment-control,
   Experiment-structure, Experiment-procedure, Measurement-event or Data-feature.
4. Group with parentheses the tags that describe the same thing: `(Red, Circle)` is one red
   circle; `Red, Circle` says nothing about which thing is red. Close every parenthesis.
5. Describe what was presented with Visual-presentation or Auditory-presentation, and who
   acted with an agent group: `(Experiment-participant, (Press, Mouse-button))`.
6. Values follow a slash with the unit after a space: `Duration/2 s`, `Frequency/440 Hz`,
   `Item-count/3`, `Label/Trial-start` (labels: letters, digits, hyphens, no spaces).
7. Do not repeat a tag in the same group. Do not use Def, Def-expand, Definition, Onset,
   Offset, Inset or Duration unless the description asks for timing of an ongoing event;
   then write them in a top-level group: `(Duration/2 s, (Sensory-event, Beep))`.
8. Extend a tag (`Parent/New-term`) only when no vocabulary tag fits; the parent must be a
   vocabulary tag.
"""

_SPACES = re.compile(r"\s+")


def check_description(text: str) -> str:
    """The description to annotate, stripped; one sentence of InputError when unusable."""
    text = _SPACES.sub(" ", text or "").strip()
    if not text:
        raise InputError("The event description is empty; describe the event in a sentence.")
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise InputError(
            f"The event description has {len(text)} characters; the limit is "
            f"{MAX_DESCRIPTION_CHARS}: describe one event at a time."
        )
    return text


def clean_annotation(text: str) -> str:
    """The HED string in a model's answer: first non-empty line, no code fences, quotes or a
    leading 'HED:' label, whitespace normalised, cut at ``MAX_ANNOTATION_CHARS``."""
    text = text.strip().strip("`").strip()
    if text.lower().startswith("hed"):
        text = re.sub(r"^hed\w*\s*[:=]\s*", "", text, flags=re.IGNORECASE)
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("```")
    ]
    text = lines[0] if lines else ""
    text = text.strip().strip('"').strip("'").strip()
    return _SPACES.sub(" ", text)[:MAX_ANNOTATION_CHARS]


@dataclass(frozen=True)
class Group:
    """A parenthesised group: its direct tags and nested groups."""

    tags: tuple[str, ...]
    groups: tuple[Group, ...]


def split_top_level(hed: str) -> list[str]:
    """Split at commas outside parentheses (each part stripped, empty parts dropped)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in hed:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def parse_hed(hed: str) -> Group:
    """The string as nested groups; unbalanced parentheses are tolerated (best effort) so
    metrics can score invalid output too."""
    tags: list[str] = []
    groups: list[Group] = []
    for part in split_top_level(hed):
        if part.startswith("(") and part.endswith(")"):
            groups.append(parse_hed(part[1:-1]))
        elif part.startswith("("):
            groups.append(parse_hed(part[1:]))
        else:
            tags.append(part.strip("() "))
    return Group(tuple(t for t in tags if t), tuple(groups))


def flatten_tags(hed: str) -> list[str]:
    """Every tag in the string, groups flattened, in order."""

    def walk(group: Group) -> list[str]:
        return [*group.tags, *(t for g in group.groups for t in walk(g))]

    return walk(parse_hed(hed))


# Confidence reported per outcome: how many of the checks held, not a model's self-report.
CONFIDENCE_VALID_FAITHFUL_COMPLETE = 90.0
CONFIDENCE_VALID_FAITHFUL = 80.0
CONFIDENCE_VALID_NOT_EVALUATED = 60.0
CONFIDENCE_VALID_UNFAITHFUL = 30.0
CONFIDENCE_INVALID = 0.0


@dataclass(frozen=True)
class Outcome:
    verdict: str
    confidence: float
    final_status: str
    """Which checks held, in words."""


def outcome(is_valid: bool, is_faithful: bool | None, is_complete: bool | None) -> Outcome:
    """The verdict of a run from its checks. A valid but unfaithful annotation is
    NEEDS_REVIEW, never success; an invalid one is INVALID whatever else was said."""
    if not is_valid:
        return Outcome("INVALID", CONFIDENCE_INVALID, "not valid HED")
    words = ["valid"]
    words.append(
        {True: "faithful", False: "not faithful", None: "faithfulness not checked"}[is_faithful]
    )
    if is_complete is not None:
        words.append("complete" if is_complete else "incomplete")
    status = ", ".join(words)
    if is_faithful is False:
        return Outcome("NEEDS_REVIEW", CONFIDENCE_VALID_UNFAITHFUL, status)
    if is_faithful is None:
        return Outcome("VALID", CONFIDENCE_VALID_NOT_EVALUATED, status)
    if is_complete:
        return Outcome("VALID", CONFIDENCE_VALID_FAITHFUL_COMPLETE, status)
    return Outcome("VALID", CONFIDENCE_VALID_FAITHFUL, status)


# -- events files: which columns get HED per level ---------------------------------------

ANNOTATED_LEVELS_MAX = 30
"""A column with more distinct text values than this is free text or ids, not categories
(unless the sidecar lists its levels)."""
NOT_ANNOTATED_COLUMNS = frozenset(
    {"onset", "duration", "sample", "response_time", "hed", "hed_assembled", "stim_file"}
)
"""BIDS columns that carry times, counts, files or HED itself (compared case-folded)."""


def categorical_levels(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    sidecar: dict[str, Any] | None = None,
    *,
    max_levels: int = ANNOTATED_LEVELS_MAX,
    skip: frozenset[str] = NOT_ANNOTATED_COLUMNS,
) -> dict[str, list[str]]:
    """The categorical columns of an events table and their levels, in first-seen order.

    A column the sidecar describes with ``Levels`` or a HED dict is categorical whatever its
    values; one whose sidecar HED is a string is a value column (its ``#`` takes the value);
    otherwise a column is categorical when some value is not a number and it has at most
    ``max_levels`` distinct values. ``n/a`` and blanks are no level; ``skip`` names columns
    never annotated."""
    sidecar = sidecar or {}
    found: dict[str, list[str]] = {}
    for index, column in enumerate(header):
        entry = sidecar.get(column)
        if column.casefold() in skip or (
            isinstance(entry, dict) and isinstance(entry.get("HED"), str)
        ):
            continue
        values = list(
            dict.fromkeys(
                r[index].strip()
                for r in rows
                if index < len(r) and r[index].strip() not in ("", "n/a")
            )
        )
        described = isinstance(entry, dict) and (
            isinstance(entry.get("Levels"), dict) or isinstance(entry.get("HED"), dict)
        )
        texty = any(not _is_number(v) for v in values)
        if values and (described or (texty and len(values) <= max_levels)):
            found[column] = values
    return found


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def level_description(column: str, level: str, sidecar: dict[str, Any] | None = None) -> str:
    """What a categorical level means, to annotate: the sidecar's description of the level
    when it has one, else its name in words (``show_face`` -> "show face"), with the column's
    name when the level alone is a bare code (``value`` 5 -> "value 5")."""
    entry = (sidecar or {}).get(column)
    levels = entry.get("Levels") if isinstance(entry, dict) else None
    if isinstance(levels, dict) and isinstance(levels.get(level), str) and levels[level].strip():
        return _SPACES.sub(" ", levels[level]).strip()
    words = _SPACES.sub(" ", re.sub(r"[_\-./]+", " ", level)).strip()
    if not re.search(r"[A-Za-z]{2}", words):
        words = f"{re.sub(r'[_]+', ' ', column)} {words}"
    return words


_DEFINITION_NAME = re.compile(r"Definition/([^,()/\s]+)(/#)?", re.IGNORECASE)


def defined_names(definitions: Sequence[str]) -> tuple[str, ...]:
    """The names definition strings define, as spelled, each once, with ``/#`` after a name
    that takes a value: ``(Definition/Acc/#, (...))`` -> ``Acc/#``."""
    names: dict[str, str] = {}
    for text in definitions:
        for match in _DEFINITION_NAME.finditer(text):
            names.setdefault(match.group(1).casefold(), match.group(1) + (match.group(2) or ""))
    return tuple(names.values())


def _item_key(item: str) -> str:
    return re.sub(r"\s+", "", item).casefold()


def drop_repeats_across_columns(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    hed: dict[str, dict[str, str]],
    keep: frozenset[tuple[str, str]] = frozenset(),
    row_hed: Sequence[str] = (),
) -> dict[str, dict[str, str]]:
    """Per-level HED with the top-level items an event would repeat taken out.

    An event's HED is the level strings of its row joined, and rows with the same onset are one
    event (hedtools assembles them together), so a tag two levels both write (``Sensory-event``
    for ``event_type=show_face`` and for ``face_type=famous_face``) repeats in the event, which
    HED forbids (TAG_EXPRESSION_REPEATED). Levels are taken in the file's column order, then in
    ``hed``'s order: a level's top-level item (a tag or a whole group) goes when an event
    holding that level already has it from a level taken earlier, or from ``row_hed`` (per row,
    the HED the row carries besides its levels: value columns, the HED column), which comes
    first. ``keep`` names (column, level) strings never changed (the user's own); a level left
    with nothing is ''."""
    columns = [c for c in header if c in hed]
    order = [(c, level) for c in columns for level in hed[c]]
    rank = {pair: n for n, pair in enumerate(order)}
    index = {c: list(header).index(c) for c in columns}
    onset = next((n for n, c in enumerate(header) if c.casefold() == "onset"), None)
    events: dict[str, set[tuple[str, str]]] = {}
    fixed: dict[str, set[str]] = {}
    for n, row in enumerate(rows):
        time = row[onset].strip() if onset is not None and onset < len(row) else ""
        key = time if time and time != "n/a" else f"row {n}"
        if n < len(row_hed):
            fixed.setdefault(key, set()).update(_item_key(i) for i in split_top_level(row_hed[n]))
        pairs = events.setdefault(key, set())
        for c, i in index.items():
            value = row[i].strip() if i < len(row) else ""
            if value in hed[c]:
                pairs.add((c, value))
    result = {c: dict(levels) for c, levels in hed.items()}
    for pair in order:
        if pair in keep:
            continue
        seen: set[str] = set()
        for key, pairs in events.items():
            if pair in pairs:
                seen |= fixed.get(key, set())
                for other in pairs:
                    if rank[other] < rank[pair]:
                        seen.update(
                            _item_key(i) for i in split_top_level(result[other[0]][other[1]])
                        )
        column, level = pair
        kept = [i for i in split_top_level(result[column][level]) if _item_key(i) not in seen]
        result[column][level] = ", ".join(kept)
    return result


def row_hed_strings(
    header: Sequence[str], rows: Sequence[Sequence[str]], sidecar: dict[str, Any] | None = None
) -> list[str]:
    """Per row, the HED it carries besides its categorical levels: its HED column's cell and
    each value column's sidecar string with the row's value for ``#`` (``n/a`` adds none)."""
    sidecar = sidecar or {}
    sources: list[tuple[int, str | None]] = []
    for index, column in enumerate(header):
        entry = sidecar.get(column)
        if column == "HED":
            sources.append((index, None))
        elif isinstance(entry, dict) and isinstance(entry.get("HED"), str):
            sources.append((index, entry["HED"]))
    out = []
    for row in rows:
        parts = []
        for index, template in sources:
            value = row[index].strip() if index < len(row) else ""
            if value and value != "n/a":
                parts.append(value if template is None else template.replace("#", value))
        out.append(", ".join(parts))
    return out
