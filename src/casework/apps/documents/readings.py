"""Two readings of one line box, and the more plausible kept: the lines a receipt's seller
name and address come from, read by RapidOCR and again by Tesseract, which misread different
letters (``KANGIL`` and ``KANCIL``, ``Ja1an`` and ``JALAN``). Plausibility never looks at an
answer: words of the address and trade lexicons, a postcode's shape, letters and digits mixed
inside a word, characters no receipt prints, the engine's own confidence.
``head_lines`` says which of a page's top lines are worth a second reading."""

from __future__ import annotations

import difflib
import re

from casework.apps.documents.addresses import PLACE_WORDS
from casework.apps.documents.names import NAME_WORDS
from casework.apps.documents.patterns import DATE, edit_distance

__all__ = ["HEAD_MAX_LINES", "choose", "head_lines", "plausibility"]

HEAD_MAX_LINES = 12
"""At most this many lines are read twice: a receipt's name and address take 2 to 8."""
# the first contact, tax, registration-by-tax or date line ends the seller's block
_ENDS_HEAD = re.compile(
    r"(?i)\b(?:tel|fax|phone|h/p|gst|sst|tax|invoice|receipt|cashier|date)\b"
    rf"|{DATE}"
)
HEAD_MIN_LINES = 3
"""A heading above the name (``TAX INVOICE``, a till's ``RECEIPT``) does not end the block
within the first lines."""

# words of three letters or more: a shorter one ("NO", "CO") is found inside too many others
_KNOWN = {w for w in PLACE_WORDS | NAME_WORDS | {"SDN", "BHD", "KEDAI"} if len(w) >= 3}
_WORD = re.compile(r"[A-Za-z0-9]+")
# a postcode opening a word, as the rules read one (a zero read as O, the town run into it)
_POSTCODE = re.compile(r"^\d[\dOo]{4}(?![\dOo])")
# a letter between digits or a digit between letters: OCR's misread "L0T", "Ja1an", "4O150"
_MIXED = re.compile(r"[A-Za-z]\d+[A-Za-z]|\d[A-Za-z]\d")
# a lone small letter among capitals ("PRiNT", "CoMPANY"); title-case words run together
# ("JalanPelabur") are a join, the rules' business
_CASE_FLIP = re.compile(r"[A-Z][a-z][A-Z]")
# a full stop or comma inside a word, before a small letter ("L.ot", "Ma,lay")
_BROKEN = re.compile(r"[A-Za-z][.,][a-z]")
# what a receipt's name and address lines print; anything else is a reader's noise ("|", "»")
_PRINTED = re.compile(r"[A-Za-z0-9 .,&'()/:#+%*-]")
MARGIN = 0.5
"""The second reading replaces a span only when more plausible by more than this: the two
engines' confidences are on different scales, so they alone do not swap a digit."""
LENGTH_RATIO = 0.8
"""The second reading is considered only with between 0.8 and 1.25 times the letters and
digits of the first: a reading that dropped or invented a word is not a candidate."""


def plausibility(text: str, confidence: float) -> float:
    """How much a reading looks like what a receipt's head prints, spaces aside (where they
    fall is the rules' business: ``SANYUSTATIONERYSHOP`` holds ``STATIONERY`` as its spaced
    reading does): +2 for each lexicon word in its letters; for each word (a run of letters
    and digits) +2 if it opens with a postcode, -2 if it mixes letters and digits the way
    misreads do, -1 for a lone small letter among capitals in it; -1 for each character no such
    line prints and each full stop or comma inside a word (``L.ot``); plus the engine's
    confidence (0 to 1)."""
    words = _WORD.findall(text)
    letters = "".join(words).upper()
    score = confidence + 2 * sum(letters.count(word) for word in _KNOWN)
    score += 2 * sum(1 for word in words if _POSTCODE.match(word))
    score -= 2 * sum(1 for word in words if _MIXED.search(word))
    score -= sum(1 for word in words if _CASE_FLIP.search(word))
    score -= sum(1 for char in text if not _PRINTED.match(char))
    return score - len(_BROKEN.findall(text))


def _alnum(text: str) -> int:
    return sum(char.isalnum() for char in text)


def _alike(a: str, b: str) -> bool:
    """Two spans that may be readings of the same print: their letters and digits at most
    half the longer's length apart (one edit in a short word)."""
    x, y = ("".join(_WORD.findall(w)).upper() for w in (a, b))
    return edit_distance(x, y) <= max(1, max(len(x), len(y)) // 2)


def choose(
    first: str,
    first_confidence: float,
    second: list[tuple[str, float]],
    margin: float = MARGIN,
) -> str:
    """``first`` (RapidOCR's reading of a box, with its confidence) with each of its spans that
    ``second`` (Tesseract's words with theirs) reads differently replaced by the second's
    reading when that is more plausible by more than ``margin``. The two are aligned by their
    words (runs of letters and digits); only where they disagree is anything compared, and
    ``first``'s spaces and punctuation stand elsewhere. A ``second`` with far fewer or more
    letters and digits (a word dropped or invented) is not used."""
    if not second:
        return first
    text = " ".join(word for word, _ in second)
    size = _alnum(first)
    if not LENGTH_RATIO * size <= _alnum(text) <= size / LENGTH_RATIO:
        return first
    confidences = [conf for word, conf in second for _ in _WORD.finditer(word)]
    runs_a, runs_b = list(_WORD.finditer(first)), list(_WORD.finditer(text))
    matcher = difflib.SequenceMatcher(
        None, [m.group().upper() for m in runs_a], [m.group().upper() for m in runs_b], False
    )
    out, done = [], 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        # as many words on both sides: word by word; else the span as a whole
        pairs = (
            [(i, i + 1, j, j + 1) for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
            if i2 - i1 == j2 - j1
            else [(i1, i2, j1, j2)]
        )
        for a1, a2, b1, b2 in pairs:
            start, end = runs_a[a1].start(), runs_a[a2 - 1].end()
            span_a, span_b = first[start:end], text[runs_b[b1].start() : runs_b[b2 - 1].end()]
            conf = sum(confidences[b1:b2]) / (b2 - b1)
            # one word for one of the same length between agreeing words: one word ("40tso")
            alike = _alike(span_a, span_b) or (a2 - a1 == 1 and len(span_a) == len(span_b))
            if alike and (
                plausibility(span_b, conf) > plausibility(span_a, first_confidence) + margin
            ):
                out += [first[done:start], span_b]
                done = end
    return "".join([*out, first[done:]])


def head_lines(lines: list[str]) -> list[int]:
    """Which of a page's lines (top first) make its seller's block: those before the first
    contact, tax or date line that comes after the first ``HEAD_MIN_LINES`` (such a line among
    those first ones, a heading, is left out but does not end the block), at most
    ``HEAD_MAX_LINES`` down the page."""
    head = []
    for index, line in enumerate(lines[:HEAD_MAX_LINES]):
        if _ENDS_HEAD.search(line):
            if index >= HEAD_MIN_LINES:
                break
            continue
        head.append(index)
    return head
