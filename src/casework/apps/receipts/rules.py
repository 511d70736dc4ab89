"""The receipts domain rules: deterministic word and line features and the rules-only decision.

Pure functions over a word's text and its line; the tools, the baseline, the harmoniser and the
``rules`` strategy share them. No store, no model, no vector search here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from casework.apps.receipts.models import Verdict
from casework.runtime.decision import Evidence

__all__ = [
    "KEYWORDS",
    "RULES_SOURCE",
    "TOTAL_KEYWORDS",
    "RulesDecision",
    "WordFacts",
    "amount_role",
    "column",
    "context_checks",
    "decide_by_rules",
    "line_keywords",
    "normalize",
    "sections",
    "shape_fits",
    "word_shape",
]

_AMOUNT = re.compile(r"[-(]?\$?\d{0,6}([.,]\d{2,3})[-)]?(-?[A-Z]{1,2})?")
_PERCENT = re.compile(r"\d+(\.\d+)?%")
_DATE = re.compile(r"\d{1,4}[/\-.]\d{1,2}([/\-.]\d{2,4})?")
_TIME = re.compile(r"\d{1,2}:\d{2}(:\d{2})?([AaPp][Mm])?")
_PHONE = re.compile(
    r"[(]?\d{3}[)]?[\-.\s]?\d{3}[\-.]\d{4}|\d{3}-\d{4}|1-\d{3}-\d{3}-\d{4}|\(\d{3}\)"
)
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
# Words that say what a number on the line is (card, loyalty, a count, a table...).
CONTEXT_KEYWORDS = (
    "VISA",
    "MASTERCARD",
    "DEBIT",
    "CREDIT",
    "AMEX",
    "CASH",
    "CARD",
    "ACCOUNT",
    "TENDER",
    "REWARDS",
    "MEMBER",
    "LOYALTY",
    "ITEMS",
    "GUESTS",
    "TABLE",
    "PUMP",
    "SERVER",
    "CASHIER",
    "THANK",
    "HOURS",
    "OPEN",
    "DAILY",
    "CLUB",
    "POINTS",
    "CIRCLE",
    "EXTRACARE",
)
KEYWORDS = TOTAL_KEYWORDS + CONTEXT_KEYWORDS
_TENDER = {"VISA", "MASTERCARD", "DEBIT", "CREDIT", "AMEX", "CASH", "TENDER", "PAY", "CHARGE"}


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
        return (
            "negative_amount"
            if t.startswith(("-", "(")) or t.rstrip("AN").endswith("-")
            else "amount"
        )
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
    """Keywords present on a line that say what its numbers are, e.g. ['SUBTOTAL'],
    ['@', 'EA'] or ['REWARDS', 'CARD']."""
    upper = line_text.upper()
    tokens = [t for t in re.split(r"[^A-Z]+", upper) if t]
    if "SUB" in tokens and "TOTAL" in tokens:
        tokens = [t for t in tokens if t not in ("SUB", "TOTAL")] + ["SUBTOTAL"]
    found = []
    for kw in KEYWORDS:
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
    has_amount = [
        any(word_shape(w) in ("amount", "negative_amount") for w in line.split()) for line in lines
    ]
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


_SHAPES: dict[str, set[str]] = {
    "UNIT_PRICE": {"amount"},
    "LINE_TOTAL": {"amount", "negative_amount"},
    "SUBTOTAL": {"amount"},
    "TAX": {"amount"},
    "GRAND_TOTAL": {"amount"},
    "CHANGE": {"amount"},
    "DISCOUNT": {"amount", "negative_amount"},
    "DATE": {"date", "alpha", "integer", "alnum"},
    "TIME": {"time", "alpha", "alnum"},
    "PHONE_NUMBER": {"phone", "integer", "alnum"},
    "WEBSITE": {"url"},
    "QUANTITY": {"integer", "amount", "alnum"},
    "LOYALTY_ID": {"integer", "masked_number", "alnum", "alpha"},
    "PAYMENT_METHOD": {"alpha", "masked_number", "alnum"},
}


def shape_fits(label: str, shape: str) -> bool | None:
    """Whether a word of ``shape`` can carry ``label`` at all (None: any shape can)."""
    allowed = _SHAPES.get(label)
    return None if allowed is None else shape in allowed


def amount_role(
    text: str, line_text: str, *, rightmost: bool, amounts_on_line: int, section: str
) -> str | None:
    """What the line says an amount is: SUBTOTAL, TAX, GRAND_TOTAL, CHANGE, DISCOUNT,
    LINE_TOTAL, UNIT_PRICE, QUANTITY (a number followed by a unit or '@'), 'tender' (an
    amount paid), 'rate' (a percentage) or None."""
    shape = word_shape(text)
    if shape == "percent" or text.endswith("%"):
        return "rate"
    if shape not in ("amount", "negative_amount"):
        return None
    kws = set(line_keywords(line_text))
    tokens = [t for t in re.split(r"[^A-Z@]+", line_text.upper()) if t]
    before, _, rest = line_text.partition(text)
    before_words, after_words = before.split(), rest.split()
    unit = after_words[0].upper().strip(".") if after_words else ""
    if unit in {"@", "LB", "LBS", "GAL", "X", "KG", "OZ"}:
        return "QUANTITY"
    if unit in {"EA", "EACH", "/LB", "/GAL"}:
        return "UNIT_PRICE"
    if shape == "negative_amount" or kws & {"SAVINGS", "DISCOUNT", "COUPON"}:
        return "DISCOUNT"
    if "SUBTOTAL" in kws:
        return "SUBTOTAL"
    if "TAX" in kws:
        return "TAX"
    if "CHANGE" in kws:
        return "CHANGE"
    if kws & {"TOTAL", "BALANCE", "DUE", "AMOUNT"}:
        return "GRAND_TOTAL"
    if set(tokens) & _TENDER:
        return "tender"
    if (before_words and before_words[-1].lower() in ("@", "x")) or (
        kws & {"@", "/LB", "EA", "GAL"}
        and not (rightmost and amounts_on_line == 1 and "@" not in line_text)
    ):
        return "UNIT_PRICE"
    if section in ("items", "totals"):
        if amounts_on_line >= 2 and not rightmost:
            return "UNIT_PRICE"
        return "LINE_TOTAL"
    return None


_ROLE_LABELS = {
    "SUBTOTAL",
    "TAX",
    "GRAND_TOTAL",
    "CHANGE",
    "DISCOUNT",
    "LINE_TOTAL",
    "UNIT_PRICE",
    "QUANTITY",
}
_NOT_QUANTITY = {
    "GUESTS": "a guest count",
    "TABLE": "a table number",
    "PUMP": "a pump number",
    "ITEMS": "an item count",
}
_LOYALTY = {"REWARDS", "MEMBER", "LOYALTY", "CLUB", "POINTS", "CIRCLE", "EXTRACARE"}
_PAYMENT_WORDS = {
    "visa",
    "mastercard",
    "debit",
    "credit",
    "amex",
    "discover",
    "cash",
    "eftdebit",
    "contactless",
}
_HEADER_LABELS = {"MERCHANT_NAME", "ADDRESS_LINE", "PHONE_NUMBER", "STORE_HOURS", "WEBSITE"}
_CARD = {"CARD", "ACCOUNT", "VISA", "MASTERCARD", "DEBIT", "CREDIT", "AMEX"}


def context_checks(
    label: str, text: str, line_text: str, shape: str, role: str | None, section: str = "items"
) -> dict[str, list[str]]:
    """Plain-language facts about whether the word's own shape and line fit ``label``:
    ``{"supports": [...], "conflicts": [...]}`` (each at most a few short sentences)."""
    supports: list[str] = []
    conflicts: list[str] = []
    fits = shape_fits(label, shape)
    if fits is False:
        conflicts.append(f"a word shaped like {shape.replace('_', ' ')} cannot be {label}")
    kws = set(line_keywords(line_text))
    if role in _ROLE_LABELS:
        if role == label:
            supports.append(f"the line makes this amount {role}")
        elif role == "LINE_TOTAL" and label == "DISCOUNT":
            pass  # a positive amount on a coupon line may be a discount; the line can't tell
        elif label in _ROLE_LABELS or label in ("PAYMENT_METHOD", "LOYALTY_ID"):
            conflicts.append(f"the line makes this amount {role}, not {label}")
    elif role == "tender" and label in _ROLE_LABELS:
        conflicts.append(f"this amount is a payment tendered, not {label}")
    elif role == "rate" and label in _ROLE_LABELS:
        conflicts.append(f"this is a percentage rate, not {label}")
    if label == "QUANTITY":
        for kw, what in _NOT_QUANTITY.items():
            if kw in kws:
                conflicts.append(f"the line says this number is {what}, not an item quantity")
                break
    if shape == "masked_number" and label in ("PAYMENT_METHOD", "LOYALTY_ID"):
        if kws & _LOYALTY:
            (supports if label == "LOYALTY_ID" else conflicts).append(
                "the line names a loyalty program"
            )
        elif kws & _CARD:
            (supports if label == "PAYMENT_METHOD" else conflicts).append(
                "the line names a payment card"
            )
    n = normalize(text)
    if n in _PAYMENT_WORDS:
        if label == "PAYMENT_METHOD":
            supports.append(f"{text} is a payment method word")
        elif label != "PRODUCT_NAME":
            conflicts.append(f"{text} is a payment method word")
    if label == "DATE" and n in ("am", "pm"):
        conflicts.append("AM/PM belongs to a time, not a date")
    if label in ("TIME", "DATE") and kws & {"HOURS", "OPEN", "DAILY"}:
        conflicts.append("the line gives store hours, not the transaction")
    has_amount = any(word_shape(w) in ("amount", "negative_amount") for w in line_text.split())
    if label in _HEADER_LABELS and section == "items" and has_amount:
        conflicts.append("the word is on an item line with a price")
    if label == "PRODUCT_NAME" and section in ("header", "footer"):
        conflicts.append(f"the word is in the receipt {section}, not on an item line")
    # Lead with the verdict on the label itself: small models read "X is wrong" better than
    # a fact they must compare with the label.
    return {
        "supports": [f"{label} fits: {s}" for s in supports[:3]],
        "conflicts": [f"{label} is wrong: {c}" for c in conflicts[:3]],
    }


# ---------------------------------------------------------------------- the rules decision
RULES_SOURCE = "rules"
"""The evidence source of a rules decision (the features of the word and its line)."""
CONFLICT_CONFIDENCE = 80.0
"""Confidence of an INVALID from one conflicting rule; each further conflict adds 5."""
SUPPORT_CONFIDENCE = 70.0
"""Confidence of a VALID from one supporting rule; each further support adds 5."""
MAX_RULES_CONFIDENCE = 95.0
UNDECIDED_CONFIDENCE = 50.0
"""Confidence of a NEEDS_REVIEW: the rules are silent or contradict each other."""


@dataclass(frozen=True)
class WordFacts:
    """What the rules look at: the word, the label suggested for it, and its line."""

    label: str
    text: str
    line_text: str
    section: str
    """header, items, totals or footer (see ``sections``)."""
    amounts_on_line: int
    rightmost_amount: bool
    ref: str = ""
    """The citation of the word, e.g. ``costco#1 line 42 word 3``."""

    @property
    def shape(self) -> str:
        return word_shape(self.text)

    @property
    def role(self) -> str | None:
        return amount_role(
            self.text,
            self.line_text,
            rightmost=self.rightmost_amount,
            amounts_on_line=self.amounts_on_line,
            section=self.section,
        )


class RulesDecision(NamedTuple):
    verdict: Verdict
    """VALID, INVALID or NEEDS_REVIEW."""
    confidence: float
    reasoning: str
    evidence: list[Evidence]


def decide_by_rules(facts: WordFacts) -> RulesDecision:
    """VALID when the rules only support the label, INVALID when they only conflict with it,
    NEEDS_REVIEW when they say nothing or both."""
    checks = context_checks(
        facts.label, facts.text, facts.line_text, facts.shape, facts.role, facts.section
    )
    supports, conflicts = checks["supports"], checks["conflicts"]
    fields = {
        "word": facts.text,
        "line": facts.line_text[:100],
        "section": facts.section,
        "shape": facts.shape,
        **({"amount_role": facts.role} if facts.role else {}),
    }
    evidence = [
        Evidence(source=RULES_SOURCE, ref=facts.ref, summary=fact[:400], fields=fields)
        for fact in conflicts + supports
    ]
    if conflicts and not supports:
        confidence = min(MAX_RULES_CONFIDENCE, CONFLICT_CONFIDENCE + 5 * (len(conflicts) - 1))
        return RulesDecision("INVALID", confidence, "; ".join(conflicts) + ".", evidence)
    if supports and not conflicts:
        confidence = min(MAX_RULES_CONFIDENCE, SUPPORT_CONFIDENCE + 5 * (len(supports) - 1))
        return RulesDecision("VALID", confidence, "; ".join(supports) + ".", evidence)
    if conflicts:
        reasoning = f"The rules disagree on {facts.label}: " + "; ".join(supports + conflicts)
    else:
        reasoning = (
            f"No rule settles whether {facts.text!r} is {facts.label} on the line "
            f"{facts.line_text[:80]!r}; a person or the agent must decide."
        )
    return RulesDecision("NEEDS_REVIEW", UNDECIDED_CONFIDENCE, reasoning[:1200], evidence)
