"""Two readings of one line box, and the more plausible kept: the lines a receipt's seller
name and address come from, read by RapidOCR and again by Tesseract, which misread different
letters (``KANGIL`` and ``KANCIL``, ``Ja1an`` and ``JALAN``). Plausibility never looks at an
answer: words of the address and trade lexicons, a postcode's shape, letters and digits mixed
inside a word, characters no receipt prints, the engine's own confidence.
``head_lines`` says which of a page's top lines are worth a second reading."""

from __future__ import annotations

import re

from casework.apps.documents.addresses import _PLACE_WORDS
from casework.apps.documents.names import _NAME_WORDS
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
_KNOWN = {w for w in _PLACE_WORDS | _NAME_WORDS | {"SDN", "BHD", "KEDAI"} if len(w) >= 3}
_WORD = re.compile(r"[A-Za-z0-9]+")
_POSTCODE = re.compile(r"(?<!\d)\d{5}(?!\d)")
# a number run into a word: "8110OJOHOR", "Tampoi81"
_GLUED = re.compile(r"\d{2,}[A-Za-z]{3,}|[A-Za-z]{3,}\d{2,}")
# a letter between digits or a digit between letters: OCR's misread "L0T", "Ja1an", "4O150"
_MIXED = re.compile(r"[A-Za-z]\d+[A-Za-z]|\d[A-Za-z]\d")
# a small letter before a capital inside a word ("JALAn" is fine read either way; "CoMPANY")
_CASE_FLIP = re.compile(r"[a-z][A-Z]")
# what a receipt's name and address lines print; anything else is a reader's noise ("|", "»")
_PRINTED = re.compile(r"[A-Za-z0-9 .,&'()/:#@+%*-]")
LENGTH_RATIO = 0.8
"""The second reading is considered only with between 0.8 and 1.25 times the letters and
digits of the first: a reading that dropped or invented a word is not a candidate."""


def plausibility(text: str, confidence: float) -> float:
    """How much a line reading looks like what a receipt's head prints: +2 for each lexicon
    word in it, spaces aside (``SANYUSTATIONERYSHOP`` holds ``STATIONERY`` as its spaced
    reading does: where the spaces fall is the rules' business), +2 a postcode; for each word
    (a run of letters and digits) -2 if it mixes letters and digits the way misreads do, -1
    for a number run into it or a case flip inside it; -1 for each character no such line
    prints; plus the engine's confidence (0 to 1)."""
    letters = "".join(_WORD.findall(text)).upper()
    score = confidence + 2 * sum(letters.count(word) for word in _KNOWN)
    for word in _WORD.findall(text):
        if _POSTCODE.search(word):
            score += 2
        if _MIXED.search(word):
            score -= 2
        if _GLUED.search(word) or _CASE_FLIP.search(word):
            score -= 1
    score -= sum(1 for char in text if not _PRINTED.match(char))
    return score


def _alnum(text: str) -> int:
    return sum(char.isalnum() for char in text)


def choose(
    first: str, first_confidence: float, second: list[tuple[str, float]], margin: float = 0.0
) -> str:
    """The more plausible of two readings of one box: ``first`` (RapidOCR's, kept on a tie)
    and ``second`` (Tesseract's words with their confidences). Aligned word by word when both
    read as many words, else the whole line."""
    if not second:
        return first
    words = [w for w, _ in second]
    second_text = " ".join(words)
    size = _alnum(first)
    if not LENGTH_RATIO * size <= _alnum(second_text) <= size / LENGTH_RATIO:
        return first
    first_words = first.split()
    if len(first_words) == len(words) and all(
        _alike(a, b) for a, b in zip(first_words, words, strict=True)
    ):
        return " ".join(
            b if plausibility(b, conf) > plausibility(a, first_confidence) + margin else a
            for a, (b, conf) in zip(first_words, second, strict=True)
        )
    mean = sum(conf for _, conf in second) / len(second)
    better = plausibility(second_text, mean) > plausibility(first, first_confidence) + margin
    return second_text if better else first


def _alike(a: str, b: str) -> bool:
    """Two words that may be readings of the same printed word: their letters and digits at
    most half the longer's length apart (one edit in a short word)."""
    x, y = ("".join(_WORD.findall(w)).upper() for w in (a, b))
    return edit_distance(x, y) <= max(1, max(len(x), len(y)) // 2)


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
