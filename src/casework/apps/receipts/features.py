"""Deterministic word and line features the tools, the baseline and the harmoniser share."""

from __future__ import annotations

import re

__all__ = [
    "TOTAL_KEYWORDS",
    "column",
    "line_keywords",
    "normalize",
    "sections",
    "word_shape",
]

_AMOUNT = re.compile(r"[-(]?\$?\d{0,6}([.,]\d{2})[-)]?(-?[A-Z]{1,2})?")
_PERCENT = re.compile(r"\d+(\.\d+)?%")
_DATE = re.compile(r"\d{1,4}[/\-.]\d{1,2}([/\-.]\d{2,4})?")
_TIME = re.compile(r"\d{1,2}:\d{2}(:\d{2})?([AaPp][Mm])?")
_PHONE = re.compile(r"[(]?\d{3}[)]?[\-.\s]?\d{3}[\-.]\d{4}|\d{3}-\d{4}|1-\d{3}-\d{3}-\d{4}|\(\d{3}\)")
_URL = re.compile(r"(www\.)?[A-Za-z0-9\-]+\.(com|net|org|us|co)(/\S*)?", re.IGNORECASE)
_MASKED = re.compile(r"[*Xx#]{3,}\d{2,}")

# Keywords that say what an amount on the same line is. Order matters for display only.
TOTAL_KEYWORDS = (
    "SUBTOTAL",
    "TOTAL",
    "TAX",
    "BALANCE",
    "DUE",
    "CHANGE",
    "AMOUNT",
    "SAVINGS",
    "DISCOUNT",
    "COUPON",
    "QTY",
    "@",
    "EA",
    "/LB",
    "GAL",
    "TIP",
)


def normalize(text: str) -> str:
    """Lower case, letters and digits only (for comparing words with metadata)."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def word_shape(text: str) -> str:
    """A coarse shape: amount, negative_amount, percent, date, time, phone, url, masked_number,
    integer, alpha, alnum or symbol."""
    t = text.strip()
    if not t:
        return "symbol"
    if _MASKED.fullmatch(t):
        return "masked_number"
    if _AMOUNT.fullmatch(t):
        return "negative_amount" if t.startswith(("-", "(")) or t.rstrip("AN").endswith("-") else "amount"
    if _PERCENT.fullmatch(t):
        return "percent"
    if _TIME.fullmatch(t):
        return "time"
    if _DATE.fullmatch(t) and not re.fullmatch(r"\d+\.\d+", t):
        return "date"
    if _PHONE.fullmatch(t):
        return "phone"
    if _URL.fullmatch(t):
        return "url"
    if t.isdigit():
        return "integer"
    if re.fullmatch(r"[A-Za-z'&.,:!\-]+", t):
        return "alpha"
    if re.search(r"[A-Za-z0-9]", t):
        return "alnum"
    return "symbol"


def line_keywords(line_text: str) -> list[str]:
    """Total/price keywords present on a line, e.g. ['SUBTOTAL'] or ['@', 'EA']."""
    upper = line_text.upper()
    tokens = [t for t in re.split(r"[^A-Z]+", upper) if t]
    if "SUB" in tokens and "TOTAL" in tokens:
        tokens = [t for t in tokens if t not in ("SUB", "TOTAL")] + ["SUBTOTAL"]
    found = []
    for kw in TOTAL_KEYWORDS:
        if kw in ("@", "/LB"):
            if kw in upper:
                found.append(kw)
        elif kw in tokens:
            found.append(kw)
    return found


def column(x0: float, x1: float, width: float) -> str:
    """left, middle or right, by the word's centre on a receipt ``width`` wide."""
    if width <= 0:
        return "left"
    centre = (x0 + x1) / 2 / width
    if centre < 0.4:
        return "left"
    if centre < 0.7:
        return "middle"
    return "right"


def sections(lines: list[str]) -> list[str]:
    """One of header, items, totals, footer per line.

    header: before the first line with an amount; totals: lines naming a total, tax, balance or
    change; footer: after the last totals line; items: the rest.
    """
    n = len(lines)
    has_amount = [any(word_shape(w) in ("amount", "negative_amount") for w in line.split()) for line in lines]
    is_total = [
        bool({"SUBTOTAL", "TOTAL", "TAX", "BALANCE", "DUE", "CHANGE"} & set(line_keywords(line)))
        for line in lines
    ]
    first_amount = next((i for i in range(n) if has_amount[i]), n)
    last_total = max((i for i in range(n) if is_total[i]), default=-1)
    out = []
    for i in range(n):
        if i < first_amount:
            out.append("header")
        elif is_total[i]:
            out.append("totals")
        elif last_total >= 0 and i > last_total:
            out.append("footer")
        else:
            out.append("items")
    return out
