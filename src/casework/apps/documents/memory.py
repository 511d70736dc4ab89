"""Reading a document where a verified extraction of the same vendor found its fields.

A documents example is a document's text (its key: ``examples.document_key``) and the fields
a person verified for it. For a new document, the nearest examples (MiniLM over the key text,
whose first 256 word pieces are the header that names the vendor) each propose a value per
field:

* a **vendor's constant field** (company, address, ...: every field that is not per
  document) proposes the example's value when this document's text shows it (``grounded``);
* a **per-document field** (dates, amounts, numbers: ``per_document``) is read at the
  example's **anchor**: the letters before the value on its line (``TOTAL RM``), or the line
  above when the value stands alone on its line; in this document the line with the same
  label (or one alike: ``_label_match``; then the one nearest the example's relative
  position) gives the text of the value's shape (``25/12/2018`` -> digits/digits/digits) after that label.

The proposals vote, weighted by similarity as ``runtime.memory_layer.recall`` weighs them, and
each field's confidence is ``recall_confidence`` of its nearest agreeing example, the number
that agree and their share of the votes (an example that could not read the field votes
against). The extraction's confidence is its least sure field: one field the memory cannot
read sends the document on to the next layer.

``field_demonstrations`` renders the nearest examples as turns before the field layer's task
(``ask_fields_shown``): the lines of a verified document and the JSON a person confirmed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Any

from casework.apps.documents.fields import (
    FIELD_HINTS,
    ask_fields,
    grounded,
    numbered_lines,
)
from casework.runtime.memory import Example, Memory
from casework.runtime.memory_layer import (
    NEAR_SIMILARITY,
    NEIGHBOURS,
    VOTE_TEMPERATURE,
    Demonstration,
    recall_confidence,
)
from casework.runtime.usage import Usage

__all__ = [
    "DEMONSTRATIONS",
    "DEMO_LINES",
    "DEMO_SIMILARITY",
    "Anchor",
    "FieldRecall",
    "anchors_of",
    "ask_fields_shown",
    "per_document",
    "read_at",
    "recall_fields",
    "respelled",
    "shows",
    "sure_fields",
    "value_shape",
]

DEMONSTRATIONS = 2
"""Verified documents shown to the bundled model before the one it reads (each costs about
as many prompt tokens as the document itself, at ~56 prompt tokens a second on 2 cores)."""
DEMO_LINES = 40
"""Lines of a demonstration document shown (its header and totals carry the fields)."""
DEMO_SIMILARITY = NEAR_SIMILARITY
"""The least similarity of a verified document shown to the model: the memory's "same
vendor" (0.75). Another vendor's receipt taught the model its formats: on SROIE stream 2 with
the bundled model, receipts shown examples at 0.49-0.69 took their date formats (AEON's
22/04/2018 read as 2018042210100080567, MR. D.I.Y.'s 25-01-16 as 16-01-16: four receipts,
each read right in the run without memory, where no example was shown)."""

_PER_DOCUMENT_WORDS = ("date", "total", "amount", "number", "tax", "time", "reference", "due")


def per_document(name: str) -> bool:
    """Whether a field changes from one document of a vendor to the next (read at its anchor)
    rather than staying the vendor's (taken when the document shows it)."""
    low = name.lower()
    return any(word in low for word in _PER_DOCUMENT_WORDS)


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def _letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def value_shape(value: str) -> re.Pattern[str]:
    """A pattern for values shaped like ``value``: digit runs, letter runs and the same
    punctuation, spaces optional; not cut out of a longer number or word."""
    parts = []
    first_digits = True
    for run in re.findall(r"\d+|[A-Za-z]+|\s+|.", value.strip()):
        if run[0].isdigit():
            # the first run's length varies (an amount's magnitude); a later one keeps about
            # its own (cents, a month, a year), so ``12Mar201818`` is no ``10 MAR 2018``
            parts.append(r"\d+" if first_digits else rf"\d{{{max(1, len(run) - 1)},{len(run)}}}")
            first_digits = False
        elif run[0].isalpha():
            parts.append(r"[A-Za-z]+")
        elif run.isspace():
            parts.append(r"\s*")
        else:
            parts.append(r"\s?" + re.escape(run) + r"\s?")
    body = "".join(parts)
    head = r"(?<![\dA-Za-z])" if value.strip()[:1].isalnum() else ""
    tail = r"(?![\dA-Za-z])" if value.strip()[-1:].isalnum() else ""
    return re.compile(head + body + tail)


def _spans(line: str, value: str) -> list[tuple[int, int]]:
    """Where ``value`` occurs in ``line``, ignoring case and spaces."""
    chars = [re.escape(c) for c in value if not c.isspace()]
    if not chars:
        return []
    return [m.span() for m in re.finditer(r"\s*".join(chars), line, flags=re.IGNORECASE)]


@dataclass(frozen=True)
class Anchor:
    """Where a verified value stood in its document."""

    label: str
    """The letters before it on its line, or (``same_line`` False) of the line above."""
    same_line: bool
    position: float
    """Its line's place in the document, 0 (first line) to 1 (last)."""


def anchors_of(text: str, value: str) -> list[Anchor]:
    """Every place a value stands in a document with a label to find it by, in reading
    order (a total also printed as an item's price has two; the first that reads wins)."""
    lines = _lines(text)
    found: list[Anchor] = []
    for i, line in enumerate(lines):
        position = i / max(len(lines) - 1, 1)
        for start, _ in _spans(line, value):
            label = _letters(line[:start])
            if label:
                found.append(Anchor(label, True, position))
            elif i > 0 and _letters(lines[i - 1]):
                found.append(Anchor(_letters(lines[i - 1]), False, position))
    return list(dict.fromkeys(found))


LABEL_RATIO = 0.8
"""Two labels of four letters or more are the same when this alike (``difflib`` ratio): OCR
reads ``Total 5ales`` on one receipt and ``Total Sales`` on the next."""
SHOWN_COVERAGE = 0.8
"""A constant value counts as shown when this share of its letters and digits appears in the
text in runs of three or more, in order (an OCR slip does not hide a vendor's name)."""
SHOWN_GAP = 4
"""...and no more than this many of its letters and digits in a row are missing, nor this
many of the text's between two of its runs: a slip loses or adds a letter or two, another
branch's address loses its mall's name (``AMPANG POINT CENTRE``, 17)."""


def _label_match(label: str, seen: str) -> float:
    """1 for the same label, the ``difflib`` ratio when at least ``LABEL_RATIO``, else 0."""
    if label == seen:
        return 1.0
    if min(len(label), len(seen)) < 4:
        return 0.0
    ratio = SequenceMatcher(None, label, seen, autojunk=False).ratio()
    return ratio if ratio >= LABEL_RATIO else 0.0


def shows(value: str, text: str) -> bool:
    """Whether the document shows a verified constant value, allowing OCR slips."""
    if grounded(value, text):
        return True
    want, have = _plain(value), _plain(text)
    if len(want) < 6:  # too short to tell a slip from another value
        return False
    blocks = [
        b
        for b in SequenceMatcher(None, want, have, autojunk=False).get_matching_blocks()
        if b.size >= 3
    ]
    if sum(b.size for b in blocks) / len(want) < SHOWN_COVERAGE:
        return False
    ends = [0, *(e for b in blocks for e in (b.a, b.a + b.size)), len(want)]
    if any(ends[i + 1] - ends[i] > SHOWN_GAP for i in range(0, len(ends) - 1, 2)):
        return False
    # ...and in one place: the text between two matched runs is a slip, not other words
    # (``KSL CITY`` matched as the ``CITY`` of ``SUNWAY VELOCITY`` below the address)
    return all(b.b - (a.b + a.size) <= SHOWN_GAP for a, b in pairwise(blocks))


def read_at(text: str, anchor: Anchor, shape: re.Pattern[str]) -> str | None:
    """The value of ``shape`` after ``anchor``'s label in ``text``, from the line whose label
    is most alike (``_label_match``), then nearest the anchor's relative position; None when
    no line carries the label."""
    lines = _lines(text)
    hits: list[tuple[float, float, str]] = []
    for i, line in enumerate(lines):
        position = i / max(len(lines) - 1, 1)
        if anchor.same_line:
            for m in shape.finditer(line):
                alike = _label_match(anchor.label, _letters(line[: m.start()]))
                if alike:
                    hits.append((-alike, abs(position - anchor.position), m.group().strip()))
                    break
        elif i > 0 and (alike := _label_match(anchor.label, _letters(lines[i - 1]))):
            alone = shape.search(line)
            if alone and not _letters(line[: alone.start()]):
                hits.append((-alike, abs(position - anchor.position), alone.group().strip()))
    return min(hits)[2] if hits else None


def _propose(example: Example, name: str, text: str) -> str | None:
    """What one example says field ``name`` of this document is (None: it cannot say)."""
    value = (example.answer.get("fields") or {}).get(name)
    if not isinstance(value, str) or not value.strip():
        return None
    if not per_document(name):
        return value if shows(value, text) else None
    shape = value_shape(value)
    for anchor in anchors_of(example.key_text, value):
        read = read_at(text, anchor, shape)
        if read is not None:
            return read
    return None


def _plain(value: str) -> str:
    return re.sub(r"[^a-z0-9]", "", value.lower())


@dataclass
class FieldRecall:
    """What the memory reads of one document."""

    values: dict[str, str | None] = field(default_factory=dict)
    confidences: dict[str, float] = field(default_factory=dict)
    """Per field, 0-100 (``recall_confidence``)."""
    used: list[tuple[Example, float]] = field(default_factory=list)
    """The near examples that gave a value, with their similarity, nearest first."""
    nearest: float | None = None
    """The similarity of the nearest example (near or not)."""
    verified: dict[str, str] = field(default_factory=dict)
    """Per vendor's constant field, the value a person verified on the nearest near example
    that has it, read or not (``respelled`` compares a rules reading with it)."""

    @property
    def confidence(self) -> float:
        """The least sure field's (0 when the memory reads nothing)."""
        return min(self.confidences.values()) if self.confidences else 0.0


def recall_fields(
    memory: Memory,
    text: str,
    key: str,
    wanted: Sequence[str] | None = None,
    *,
    k: int = NEIGHBOURS,
    near: float = NEAR_SIMILARITY,
) -> FieldRecall:
    """The fields ``wanted`` (None: those the nearest near example verified) of the document
    ``text`` (found by its key text ``key``), read where the nearest verified examples found
    theirs, each with its confidence."""
    neighbours = memory.nearest(key, k)
    out = FieldRecall(nearest=neighbours[0][1] if neighbours else None)
    close = [(e, s) for e, s in neighbours if s >= near]
    if not close:
        return out
    names = list(wanted) if wanted else list(close[0][0].answer.get("fields") or {})
    used: dict[int, tuple[Example, float]] = {}
    for name in names:
        if not per_document(name):
            mine = [(e.answer.get("fields") or {}).get(name) for e, _ in close]
            kept = next((v for v in mine if isinstance(v, str) and v.strip()), None)
            if kept is not None:
                out.verified[name] = kept
        votes: dict[str, float] = {}
        first: dict[str, str] = {}
        backers: dict[str, list[tuple[Example, float]]] = {}
        total = 0.0
        for example, sim in close:
            if name not in (example.answer.get("fields") or {}):
                continue
            weight = math.exp((sim - 1.0) / VOTE_TEMPERATURE)
            total += weight
            value = _propose(example, name, text)
            if value is None or not _plain(value):
                continue
            key_of = _plain(value)
            votes[key_of] = votes.get(key_of, 0.0) + weight
            first.setdefault(key_of, value)
            backers.setdefault(key_of, []).append((example, sim))
        if not votes:
            out.values[name], out.confidences[name] = None, 0.0
            continue
        best = max(votes, key=lambda v: votes[v])
        agreeing = backers[best]
        out.values[name] = first[best]
        out.confidences[name] = recall_confidence(
            agreeing[0][1], len(agreeing), votes[best] / total
        )
        for example, sim in agreeing:
            used.setdefault(example.id, (example, sim))
    out.used = sorted(used.values(), key=lambda pair: -pair[1])
    return out


RESPELL_RATIO = 0.85
"""A rules reading and a verified value are the same words when their sorted words are this
alike (``difflib`` ratio): ``HARIWAKE`` for ``HARDWARE``, a comma read as a full stop."""


def _words(value: str) -> str:
    return " ".join(sorted(re.findall(r"[a-z0-9]+", value.lower())))


def respelled(found: FieldRecall, fields: dict[str, Any]) -> dict[str, str]:
    """The vendor's constant fields the rules read as a person verified them on this vendor's
    documents, up to OCR slips and punctuation: the verified spelling, per field. The same
    numbers and as many words are required: a branch's address differs from the next
    branch's in its lot, postcode or mall, which no slip should carry over."""
    out: dict[str, str] = {}
    for name, verified in found.verified.items():
        read = fields.get(name)
        if not isinstance(read, str) or read == verified:
            continue
        if sorted(re.findall(r"\d+", read)) != sorted(re.findall(r"\d+", verified)):
            continue
        if len(_words(read).split()) != len(_words(verified).split()):
            continue  # a slip changes letters, not words: ``KSL CITY`` is another branch
        alike = SequenceMatcher(None, _words(read), _words(verified), autojunk=False).ratio()
        if alike >= RESPELL_RATIO:
            out[name] = verified
    return out


def sure_fields(found: FieldRecall, threshold: float) -> dict[str, str]:
    """The fields the memory read at confidence ``threshold`` (0-100) or more: what a later
    layer takes as read rather than asking a model for, when another field of the document
    kept the memory from deciding the whole of it."""
    return {
        name: value
        for name, value in found.values.items()
        if value is not None and found.confidences.get(name, 0.0) >= threshold
    }


# -- demonstrations for the field layer -------------------------------------------------


def _task(lines: str, names: Sequence[str]) -> str:
    from casework.runtime.prompts import load_prompt

    wanted = "\n".join(f"- {n}: {FIELD_HINTS.get(n, n.replace('_', ' '))}" for n in names)
    return load_prompt(__package__, "fields_task", lines=lines, fields=wanted)


def _messages(text: str, names: list[str], shown: Sequence[Demonstration]) -> list[Any]:
    """The field layer's prompt with each verified document (least similar first, so the
    nearest sits next to the document) and the answer a person confirmed, as turns."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from casework.runtime.prompts import load_prompt

    messages: list[Any] = [SystemMessage(load_prompt(__package__, "fields_system"))]
    for demo in reversed(shown):
        verified = demo.answer.get("fields") or {}
        messages.append(HumanMessage(_task(numbered_lines(demo.key_text, DEMO_LINES), names)))
        messages.append(
            AIMessage(json.dumps({n: verified.get(n) for n in names}, ensure_ascii=False))
        )
    messages.append(HumanMessage(_task(numbered_lines(text), names)))
    return messages


def ask_fields_shown(
    model: Any, text: str, names: list[str], shown: Sequence[Demonstration]
) -> tuple[dict[str, Any], Usage]:
    """``fields.ask_fields`` with verified documents shown first: the model's value (or None)
    for each name under the same JSON schema, and what the call cost."""
    return ask_fields(model, text, names, messages=_messages(text, names, shown))
