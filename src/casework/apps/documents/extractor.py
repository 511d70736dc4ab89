"""The rules extractor: labelled lines and regexes, no model.

It is the ``rules`` strategy and the fallback when the agent fails (the spec keeps its
original extractor for the same reason). Confidences are fixed per kind of evidence, named
below, so the evaluation can compare them with the agent's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from casework.apps.documents.addresses import read_address
from casework.apps.documents.dates import date_digits, first_date, month_apart
from casework.apps.documents.names import read_company
from casework.apps.documents.normalize import as_amount, date_candidates
from casework.apps.documents.patterns import DATE

__all__ = [
    "CONF_COMPLETE",
    "CONF_GUESSED",
    "CONF_LABELLED",
    "CONF_MISSING",
    "DOCUMENT_TYPES",
    "FIELDS_BY_TYPE",
    "classify",
    "coverage_confidence",
    "extract",
    "wanted_fields",
]

CONF_LABELLED = 0.8
"""A value found after its own label ("Total: 45.10")."""
CONF_GUESSED = 0.5
"""A value found by position or shape only (the first line as the company)."""
CONF_MISSING = 0.1
"""Custom mode: a requested field the rules cannot find (null)."""
CONF_COMPLETE = 0.9
"""The whole extraction, when the rules found every field it should have (see
``coverage_confidence``). On the bundled documents each of the 29 such extractions was
entirely right, and each of the 15 others missed or got a field wrong."""
UNKNOWN_TYPE_CAP = 0.5
"""Auto mode on a document no cue word types: which fields it should have is itself a guess."""

# Auto mode: the fields a document of each type carries.
FIELDS_BY_TYPE: dict[str, tuple[str, ...]] = {
    "invoice": (
        "company",
        "invoice_number",
        "date",
        "customer",
        "subtotal",
        "tax",
        "total",
        "currency",
    ),
    "receipt": ("company", "date", "tax", "total", "currency"),
    "form": ("name", "email", "phone", "reference", "date"),
    "letter": ("company", "date", "reference", "recipient"),
    "document": ("company", "date", "total"),
}
DOCUMENT_TYPES = tuple(t for t in FIELDS_BY_TYPE if t != "document")
"""The types a document can be told apart as; ``document`` is 'none of these'."""

# a space inside an amount only as a thousands separator ("1 234.50"), between groups of three
# digits before any decimal point: a wider gap is a column break ("TOTAL QTY: 5   44.73" holds
# two numbers, not 544.73), and so is one after a decimal ("40.39 319.00")
_AMOUNT = (
    r"[-(]?[$€£]?\s?(?:\d{1,3}(?:\s\d{3}(?!\d))+(?:[.,]\d{2})?|\d[\d,.]*\d)(?:\.\d{2})?\)?"
    r"|[$€£]?\d"
)

# name -> label words (first match wins; the value follows the label on the same line)
_LABELS: dict[str, tuple[str, ...]] = {
    "total": (
        "grand total",
        "total due",
        "amount due",
        "balance due",
        "total payable",
        "amount payable",
        "amt payable",
        "rounded total",
        "total rounded",
        "total amt rounded",
        "total after rounding",
        "total amount",
        "total",
        # the languages invoices come in: Dutch, French, German
        "factuur totaal",
        "totaal",
        "somme à payer",
        "montant total",
        "total ttc",
        "gesamtbetrag",
        "rechnungsbetrag",
        "endbetrag",
        "zahlbetrag",
        "bruttosumme",
        "gesamtsumme",
        "summe inkl",
        "net à payer",
    ),
    "subtotal": ("subtotal", "sub-total", "sub total", "net amount", "net amt", "net total"),
    "tax": ("vat", "sales tax", "tax", "gst"),
    "invoice_number": ("invoice number", "invoice no", "invoice #", "inv no", "invoice"),
    "receipt_number": ("receipt number", "receipt no", "receipt #", "transaction"),
    "date": ("invoice date", "date of issue", "issue date", "date"),
    "due_date": ("due date", "payment due", "due"),
    "customer": ("bill to", "billed to", "customer", "sold to", "client"),
    "reference": ("reference", "ref", "our ref", "your ref"),
    "name": ("full name", "name", "applicant"),
    "email": ("email", "e-mail"),
    "phone": ("phone", "tel", "telephone"),
}
_AMOUNT_FIELDS = {"total", "subtotal", "tax"}
# what may stand before an amount on its own line: "$", "€", "Rs", "RM", "EUR"
_CODE_OR_SIGN = r"[$€£]|rs\.?|rm|eur|usd|gbp|inr|myr"
_DATE_FIELDS = {"date", "due_date"}
# custom-mode synonyms: a user's field name -> the rules field that answers it
_SYNONYMS = {
    "company": "company",
    "issuer": "company",
    "vendor": "company",
    "merchant": "company",
    "supplier": "company",
    "seller": "company",
    "store": "company",
    "total": "total",
    "amount": "total",
    "total_amount": "total",
    "date": "date",
    "invoice_date": "date",
    "address": "address",
    "invoice_number": "invoice_number",
    "number": "invoice_number",
    "tax": "tax",
    "vat": "tax",
    "vat_rate": "tax_rate",
    "tax_rate": "tax_rate",
    "gst_rate": "tax_rate",
    "vat_percent": "tax_rate",
    "subtotal": "subtotal",
    "currency": "currency",
    "customer": "customer",
    "email": "email",
    "phone": "phone",
    "due_date": "due_date",
    "document_type": "document_type",
}
_TYPES = (
    ("invoice", ("invoice",)),
    ("receipt", ("receipt", "thank you for shopping", "cashier", "change due")),
    ("form", ("application form", "form", "please complete", "signature")),
    ("letter", ("dear ", "yours sincerely", "yours faithfully", "kind regards", "sincerely")),
)
# a till's lines: the change given ("CHANGE RM 0.00") or its cashier; a receipt that is also a
# "TAX INVOICE" (as Malaysia's GST made shops head them) is still a receipt: no customer, no
# invoice number to expect
_TILL = re.compile(r"(?im)^\s*(?:change(?:\s*due)?\b[^\n]*\d|cashier\b)")
# "TOTAL ITEM DISCOUNT 0.00", "TOTAL SALES (EXCLUDING GST)", "TOTAL GST", "SUB TOTAL", "Total
# HT" (French: before tax), "Gesamtbetrag der Zuschläge" (German: of the charges), "ohne USt."
# (without tax), "Total 0% supplies: -9.62" (the sales of one GST rate): a total line that
# names something other than the amount to pay
_NOT_THE_TOTAL = re.compile(
    r"(?i)\b(discounts?|savings?|saved|excl\w*|exempt|tender\w*|points?|weight|change|ht"
    r"|ohne|netto|zuschl\w*|abschl\w*|suppl\w*|charges?)\b"
)
_COUNT_WORDS = r"\b(?:[qo0]ty|quantity|items?|item\(s\)|pcs|units?|count)\b"
_COUNTED = re.compile(rf"(?i){_COUNT_WORDS}")
_TAX_WORD = re.compile(r"(?i)\b(tax|gst|vat)\b")
# the heading of a till's table of tax by rate: "GST Summary", "Tax Code % Amt(RM) Tax(RM)"
_TAX_SUMMARY = re.compile(r"(?i)\b(?:gst|tax)\s*summary\b|^\s*tax\s*code\b")


def _an_amount_not_a_number(before: str, between: str, value: str) -> bool:
    """Not a registration number or a date after a tax's name: "GST ID: 001505116160", "GST
    REG NO : 000306020352", "TAX INVOICE Date: 22/12/2017" (the tax of 66 of 100 SROIE
    receipts was read so)."""
    if re.search(r"(?i)\b(id|reg\w*|n[o0]|number|#|invoice|date)\b", between):
        return False
    return not re.fullmatch(r"\d{7,}", value.strip())


def _names_the_total(before: str, between: str, value: str) -> bool:
    """Whether a line's "total" label is the amount to pay: not qualified away (``between``:
    the text from the label to the value), not a sub total, a tax only when included, and a
    count ("TOTAL QTY: 4", "Total Items = 1.00", "Item Total 3") only when an amount follows
    the count ("TOTAL QTY: 5 44.73")."""
    # "SUB TOTAL", "TAX TOTAL: 0.57" (the tax, not the sale)
    if re.search(r"(?i)\b(?:sub|tax|gst|vat)[\s-]*$", before) or _NOT_THE_TOTAL.search(between):
        return False
    counted = _COUNTED.search(between) and not re.search(r"\d", _COUNTED.sub("", between))
    if counted or re.search(rf"(?i){_COUNT_WORDS}\s*$", before) or before.strip() == "(":
        return False  # a note in brackets: "(TOTAL INCLUDED GST @ 6% : 0.42)" is the tax
    # "Inclusive" as OCR reads it too: "lnclusive of GsT"
    return not (
        _TAX_WORD.search(between) and not re.search(r"(?i)\b[il1]n[cgd](?:[l1i]\w*)?\b", between)
    )


def _total_line(line: str) -> str:
    """The total's label as OCR reads it ("Totai Amt Rounded", "T0TAL", "Tota! Inclusive GST",
    "TOTALINCL.GST@6%"), a count apart from the amount after it ("Total Qty: 15 190.80")."""
    line = re.sub(
        r"(?i)\bt[o0]ta(?:[il1](?=\b|incl|excl|amt)|!(?=\s))|\bto[il1]al\b", "Total", line
    )
    line = re.sub(r"(?i)(?<=total)(?=incl|excl|amo?u?nt|amt|due|sales|rm(?:\b|\d))", " ", line)
    line = re.sub(r"(?i)\btota(?=rm\d)", "Total ", line)  # "Grand TotaRM14.20"
    # a hyphen or colon read for the decimal point of the amount ending the line ("TOTAL
    # 46-20", "TOTAL RM5:00"), a space inside it after its currency ("$1 1.20"), an I for a 1
    line = re.sub(r"(?i)(\btotal\b\D*\d+)[-:](\d\d)\s*$", r"\1.\2", line)
    line = re.sub(r"(?:(?<=\$)|(?<=RM))(\d) (?=\d+\.\d\d\b)", r"\1", line)
    line = re.sub(r"(?<=RM)[I|l](?=\d)", "1", line)
    return re.sub(rf"(?i)({_COUNT_WORDS}\s*[:=]?\s*\d+) (?=\d)", r"\1  ", line)


def _total(lines: list[str]) -> str | None:
    """The amount to pay: the first total line that names it, or, when a cash rounding
    adjustment is printed, the first one after it ("TOTAL 7.42 / ROUNDING -0.02 / TOTAL 7.40")."""

    def first(among: list[str]) -> str | None:
        return _after_label(among, _LABELS["total"], _AMOUNT, last=True, accept=_names_the_total)

    lines = [_total_line(ln) for ln in lines]
    # the table of tax by rate under the amount paid ("Total: 234.00 14.04") is not the sale's
    summary = next((i for i, ln in enumerate(lines) if _TAX_SUMMARY.search(ln)), len(lines))
    if 0 < summary < len(lines) and (found := _total(lines[:summary])):
        return found
    rounding = next(
        (
            i
            for i, ln in enumerate(lines)
            if re.search(r"(?i)\bround", ln) and "total" not in ln.lower()
        ),
        None,
    )
    if rounding is not None and (after := first(lines[rounding + 1 :])):
        return after
    if labelled := first(lines):
        if rounding is not None and (
            paid := _cash_rounded(labelled, lines[rounding : rounding + 3])
        ):
            return paid
        return labelled
    # a text layer's table puts the label and its amount on lines of their own ("Grand Total" /
    # "$" / "279.84"); a currency sign or a colon alone on a line between them
    label = "|".join(re.escape(w) for w in _LABELS["total"])
    for at, line in enumerate(lines):
        if not re.fullmatch(rf"(?i)\s*(?:{label})\s*:?\s*", line):
            continue
        for below in lines[at + 1 : at + 4]:
            if re.fullmatch(rf"(?i)\s*(?:[$€£:]|{_CODE_OR_SIGN})?\s*", below):
                continue
            if m := re.fullmatch(rf"(?i)\s*(?:{_CODE_OR_SIGN})?\s*({_AMOUNT})\s*", below):
                return m.group(1)
            break
    # no total label: a line that is only "DUE 7.50" (SROIE's bakery tills print it so)
    for line in lines:
        if m := re.fullmatch(
            r"(?i)\s*(?:amount\s+)?due\s*:?\s*(?:RM|\$|€|£)?\s*(\d[\d,]*\.\d{2})\s*", line
        ):
            return m.group(1)
    return None


def _cash_rounded(total: str, lines: list[str]) -> str | None:
    """The rounded amount a till prints under its cash rounding line when no total label
    follows it ("Total Sales 181.98" / "Rounding Adjustment RM .02" / "Rounding RM 182.00",
    or "RM 60.30" alone): the total moved by the adjustment (``lines[0]``; its sign often not
    printed) to the multiple of 0.05 it exists to reach, or rounded to 0.05 when OCR left the
    adjustment unreadable ("10'0-"), taken only when one of the two lines under it prints
    that amount (a card payment's total stays as printed); else None."""
    amount = as_amount(total)
    if amount is None:
        return None
    cents = round(amount * 100)
    if m := re.search(r"(-)?\s*(?:RM|\$)?\s*(-)?\s*\d?[.,](\d{2})\b", lines[0]):
        step = int(m[3])
        moves = [-step] if (m[1] or m[2]) else [step, -step]
        reached = [cents + move for move in moves if 0 < step < 5 and (cents + move) % 5 == 0]
    else:
        reached = [5 * round(cents / 5)] if cents % 5 else []
    for value in reached:
        printed = f"{value // 100}.{value % 100:02d}"
        if any(re.search(rf"(?<![\d.]){re.escape(printed)}(?!\d)", ln) for ln in lines[1:]):
            return printed
    return None


def classify(text: str) -> str:
    """The document's type by its cue words (``document`` when none is there)."""
    if _TILL.search(text):
        return "receipt"
    low = text.lower()
    for kind, words in _TYPES:
        if any(w in low for w in words):
            return kind
    return "document"


def wanted_fields(
    text: str, requested: list[str] | None, document_type: str | None = None
) -> list[str]:
    """Custom mode: the requested names; auto mode: the fields of the document's type
    (``document_type`` when it is known otherwise, else the cue words')."""
    if requested:
        return list(dict.fromkeys(requested))
    kind = document_type or classify(text)
    return list(FIELDS_BY_TYPE.get(kind, FIELDS_BY_TYPE["document"]))


def coverage_confidence(text: str, fields: dict[str, Any], requested: list[str] | None) -> float:
    """How sure the rules are of a whole extraction: the share of the fields it should have
    that they found, ``CONF_COMPLETE`` when that is all of them; at most ``UNKNOWN_TYPE_CAP``
    in auto mode when no cue word gives the document's type. A value found by position or
    shape (the first line as the company) counts as found: the gaps, not the guesses, are
    what the bundled set shows going wrong."""
    wanted = wanted_fields(text, requested)
    found = sum(1 for name in wanted if fields.get(name) is not None)
    confidence = CONF_COMPLETE * found / len(wanted) if wanted else 0.0
    if not requested and classify(text) == "document":
        confidence = min(confidence, UNKNOWN_TYPE_CAP)
    return round(confidence, 4)


def _after_label(
    lines: list[str],
    labels: tuple[str, ...],
    pattern: str | None,
    *,
    last: bool = False,
    accept: Callable[[str, str, str], bool] | None = None,
) -> str | None:
    """The value after the first label found; ``last``: the line's last match ("VAT 20% 2.60");
    ``accept(before, between, value)``: whether a line's label counts (the text before the
    label, and from the label to the value)."""
    for label in labels:
        rx = re.compile(rf"(?i)(?<![a-z]){re.escape(label)}(?![a-z])\s*[:#.]?\s*(.*)$")
        for line in lines:
            m = rx.search(line)
            if not m:
                continue
            rest = m.group(1).strip()
            if pattern is None:
                if rest:
                    return rest
                continue
            found = [(f.start(), f.group(0).strip()) for f in re.finditer(pattern, rest)]
            found = [(at, f) for at, f in found if not rest[at + len(f) :].lstrip().startswith("%")]
            if not found:
                continue
            at, value = found[-1] if last else found[0]
            if accept is not None and not accept(line[: m.start()], rest[:at], value):
                continue
            return value
    return None


# currency codes and signs as pages print them: a dollar sign with a country's letters before
# it is that country's dollar ("S$ 12.00"), "RM" is the Malaysian ringgit next to an amount or
# heading a column ("RM8.48", "RMO.06" as OCR reads a zero, "Amount(RM)"), "Rs" the rupee
_CURRENCY_MARKS = re.compile(
    r"(?<![A-Z])(?P<code>USD|EUR|GBP|CHF|CAD|AUD|NZD|MYR|SGD|HKD|INR|JPY|CNY|SEK|NOK|DKK|PLN"
    r"|IDR|THB)(?![A-Z])"
    r"|(?<![A-Za-z])(?P<ringgit>RM)(?=[\s\d.:)]|O[.\d]|$)"
    r"|(?<![A-Za-z])(?P<rupee>Rs)\.?(?=\s?-?\d)"
    r"|(?:(?<![A-Za-z])(?P<country>US|SG|S|HK|AU|A|CA|C|NZ))?\$"
    r"|(?P<sign>[£€₹¥])",
    re.MULTILINE,
)
_SIGNS = {"£": "GBP", "€": "EUR", "₹": "INR", "¥": "JPY"}
_DOLLARS = {"US": "USD", "S": "SGD", "SG": "SGD", "HK": "HKD", "A": "AUD", "AU": "AUD"}
_DOLLARS |= {"C": "CAD", "CA": "CAD", "NZ": "NZD", "": "USD"}


def _currency(text: str) -> str | None:
    """The currency the page writes most often (an ISO code, a sign, or ``RM``), the first
    written on a tie."""
    seen: dict[str, list[int]] = {}
    for m in _CURRENCY_MARKS.finditer(text):
        if m["code"]:
            code = m["code"]
        elif m["ringgit"]:
            code = "MYR"
        elif m["rupee"]:
            code = "INR"
        elif m["sign"]:
            code = _SIGNS[m["sign"]]
        else:
            code = _DOLLARS[m["country"] or ""]
        seen.setdefault(code, []).append(m.start())
    if not seen:
        return None
    return min(seen, key=lambda c: (-len(seen[c]), seen[c][0]))


_TAX_NAME = (
    r"(?i)(?<![a-z])(?:vat|tva|btw|mwst|ust|iva|gst|igst|sst|sales tax|tax(?:es)?"
    r"|(?:umsatz)?steuer(?:satz)?)\b"
)
_PERCENT = r"(\d{1,2}(?:[.,]\d{1,3})?)\s?%"


def _tax_rate(lines: list[str]) -> tuple[str, float] | None:
    """The tax rate an invoice charges: the last percentage written after the tax's name
    ("BTW 21% € 124,61", "TVA 20% : 9,34 €", "Tax (0%)": the summary under the items is
    last), as sure as a labelled value; else the first percentage in the rows under a column
    headed with the tax's name and "%" ("BTW % Grondslag" / "21 % 41,31"; a text layer may
    put a table's cells a line each, so up to ten lines under), a guess."""
    labelled = [
        m.group(1)
        for line in lines
        for m in re.finditer(_TAX_NAME + r"[^%\d]{0,12}?\(?" + _PERCENT, line)
    ]
    if labelled:
        return _rate(labelled[-1]), CONF_LABELLED
    for at, line in enumerate(lines):
        # a column headed with the tax's name: with "%", or among three or more headings
        # ("Beschreibung Nettopreis Menge Steuersatz Nettobetrag")
        if (
            re.search(_TAX_NAME, line)
            and ("%" in line or len(line.split()) >= 3)
            and not re.search(r"\d|:", line)
        ):
            for row in lines[at + 1 : at + 11]:
                # not a percentage in brackets inside an item's name ("SF25 (30 %)")
                if m := re.search(r"(?<![\d.,(])" + _PERCENT + r"(?!\s*\))", row):
                    return _rate(m.group(1)), CONF_GUESSED
    return None


def _rate(number: str) -> str:
    """``"14.50"`` -> ``"14.5%"``, ``"21"`` -> ``"21%"``."""
    value = float(number.replace(",", "."))
    return f"{value:g}%"


def _value(name: str, raw: str | None) -> Any:
    if raw is None:
        return None
    if name in _AMOUNT_FIELDS:
        return as_amount(raw)
    if name in _DATE_FIELDS:
        iso = sorted(date_candidates(printed := month_apart(raw)))
        return iso[0] if len(iso) == 1 else printed
    return raw.strip(" :")


def extract(
    text: str, requested: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, float]]:
    """(fields, confidences) from plain text; custom mode returns exactly ``requested``."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    found: dict[str, tuple[Any, float]] = {"document_type": (classify(text), CONF_GUESSED)}
    company = read_company(lines)
    if company:
        found["company"] = (company[0], CONF_LABELLED if company[1] else CONF_GUESSED)
    # the address is under the name when the name heads the page
    if address := read_address(lines, company[2] if company and company[2] < 6 else 0):
        text_read, labelled = address
        found["address"] = (text_read, CONF_LABELLED if labelled else CONF_GUESSED)
    if currency := _currency(text):
        found["currency"] = (currency, CONF_GUESSED)
    dated = [date_digits(ln) for ln in lines]  # a date's zero read as U or O, put back
    for name, labels in _LABELS.items():
        pattern = _AMOUNT if name in _AMOUNT_FIELDS else DATE if name in _DATE_FIELDS else None
        if name in {"invoice_number", "receipt_number"}:
            pattern = r"[A-Z0-9][A-Z0-9-/]*\d[A-Z0-9-/]*"
        if name == "total":
            raw = _total(lines)
        else:
            accept = _an_amount_not_a_number if name in _AMOUNT_FIELDS else None
            among = dated if name in _DATE_FIELDS else lines
            raw = _after_label(among, labels, pattern, last=name in _AMOUNT_FIELDS, accept=accept)
        value = _value(name, raw)
        if value is not None:
            found[name] = (value, CONF_LABELLED)
    if "total" not in found and "subtotal" in found and classify(text) == "receipt":
        # a till that prints only "SUBTOTAL: 28.60" before the payment lines: nothing is
        # added after it, so it is the amount paid (a guess)
        found["total"] = (found["subtotal"][0], CONF_GUESSED)
    if rate := _tax_rate(lines):
        found["tax_rate"] = rate
    if "date" not in found and (unlabelled := first_date(dated)):
        found["date"] = (
            _value("date", unlabelled),
            CONF_GUESSED,
        )  # receipts print "19/01/17 10:48" unlabelled
    if requested is None:
        return {k: v for k, (v, _) in found.items()}, {k: c for k, (_, c) in found.items()}
    fields: dict[str, Any] = {}
    confidences: dict[str, float] = {}
    for name in requested:
        key = _SYNONYMS.get(name.lower().replace(" ", "_"), name.lower().replace(" ", "_"))
        value, conf = found.get(key, (None, CONF_MISSING))
        fields[name], confidences[name] = value, conf if value is not None else CONF_MISSING
    return fields, confidences
