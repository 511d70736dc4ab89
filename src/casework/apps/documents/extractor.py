"""The rules extractor: labelled lines and regexes, no model.

It is the ``rules`` strategy and the fallback when the agent fails (the spec keeps its
original extractor for the same reason). Confidences are fixed per kind of evidence, named
below, so the evaluation can compare them with the agent's.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from casework.apps.documents.addresses import read_address
from casework.apps.documents.normalize import as_amount, date_candidates
from casework.apps.documents.patterns import DATE, LEGAL_FORMS, MONTH_ABBR, edit_distance

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
    ),
    "subtotal": ("subtotal", "sub-total", "sub total", "net amount", "net total"),
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
# HT" (French: before tax): a total
# line that names something other than the amount to pay
_NOT_THE_TOTAL = re.compile(
    r"(?i)\b(discounts?|savings?|saved|excl\w*|exempt|tender\w*|points?|weight|change|ht)\b"
)
_COUNTED = re.compile(r"(?i)\b(qty|quantity|items?|item\(s\)|pcs|units?|count)\b")
_TAX_WORD = re.compile(r"(?i)\b(tax|gst|vat)\b")


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
    count ("TOTAL QTY: 4", "TOTAL ITEM(S): 10") only when an amount with cents follows it."""
    if re.search(r"(?i)\bsub[\s-]*$", before) or _NOT_THE_TOTAL.search(between):
        return False
    if _COUNTED.search(between) and not re.search(r"\d[.,]\d{2}\)?$", value):
        return False
    if before.strip() == "(":
        return False  # a note in brackets: "(TOTAL INCLUDED GST @ 6% : 0.42)" is the tax
    return not (_TAX_WORD.search(between) and not re.search(r"(?i)\binc(?:l\w*)?\b", between))


def _total(lines: list[str]) -> str | None:
    """The amount to pay: the first total line that names it, or, when a cash rounding
    adjustment is printed, the first one after it ("TOTAL 7.42 / ROUNDING -0.02 / TOTAL 7.40")."""

    def first(among: list[str]) -> str | None:
        return _after_label(among, _LABELS["total"], _AMOUNT, last=True, accept=_names_the_total)

    # OCR's readings of the label: "Totai Amt Rounded", "T0TAL", "TOTALINCL.GST@6%"
    lines = [
        re.sub(r"(?i)(?<=total)(?=incl|excl|amo?u?nt|amt|due|rm\b)", " ", ln)
        for ln in (re.sub(r"(?i)\bt[o0]ta[il1](?=\b|incl|excl|amt)", "Total", ln) for ln in lines)
    ]

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


# a company's legal form at the end of its name: "SDN BHD", "S/B", "Ltd", "GmbH", "SARL", "Inc."
# European forms a name ends with too ("Coolblue B.V.", "QualityHosting AG", "Free SAS"); not
# among the words that end an address block, where "SA" or "AG" can be a place's
_EUROPEAN_FORMS = r"ag|sas|s\.a|b\.\s?v|n\.\s?v|bv|nv|s\.r\.l|srl|s\.p\.a"
_LEGAL_FORM = re.compile(
    rf"(?i)^(?P<name>.*?[A-Za-z].*?\b(?:(?:{LEGAL_FORMS}|{_EUROPEAN_FORMS})\b\.?"
    r"|co\b\.?(?!\s*\d)))"  # not "CO 80202"
)
# the sender's line above a letter's address window ("QualityHosting AG - Uferweg 40-42 -
# D-63571 Gelnhausen"), and the legal mention at the foot of a French invoice ("Free SAS au
# capital de ..."): a name the page gives as its own
_SENDER = re.compile(r"(?i)^(?P<name>[^:]+?)\s+(?:[-–·|]\s+.*\d{4}|au capital\b)")


def _first_date(lines: list[str]) -> str | None:
    """The first written date that is a real date, on any line (no label said which)."""
    for line in lines:
        for m in re.finditer(DATE, line):
            if date_candidates(_month_apart(m.group(0))):
                return _value("date", m.group(0))
    return None


def _month_apart(raw: str) -> str:
    """OCR runs a month name into the year ("05 Mar2018"); the date reader wants them apart."""
    return re.sub(rf"(?<=\s)({MONTH_ABBR})(?=\d)", r"\1 ", raw)


def _tidy_name(name: str) -> str:
    """A name as printed, not as OCR runs it together: brackets apart from the words around
    them ("BAKERIES(KL)SDN BHD"), a till's code before it dropped ("#000002 BAIFU (M)"), a
    trade word run into the word before it ("UNIHAKKAINTERNATIONAL")."""
    name = re.sub(r"^#\d+\s+", "", name)
    name = _GLUED_SHOP.sub(r"\1 \2", name)
    name = _GLUED_TRADE_WORD.sub(r"\1 \2", name)
    name = re.sub(r"[A-Za-z]{6,}", lambda m: _name_word(m[0]), name)
    # "ENTERPRISE ISETIA ALAM)": the opening bracket read as I
    if (
        ")" in name
        and "(" not in name
        and (opened := list(re.finditer(r"\b[Il1|](?=[A-Z]{3}[^()]*\))", name)))
    ):
        name = name[: opened[-1].start()] + "(" + name[opened[-1].end() :]
    name = re.sub(r"(?i)^(kedai|restoran|syarikat|perniagaan)(?=[a-z]{3})", r"\1 ", name)
    name = re.sub(r"(?i)\bsdn(?=bhd\b)", r"\g<0> ", name)  # "SDNBHD"
    name = re.sub(r"(?<=[A-Z]-)0\b|(?<=[A-Z])0(?=[A-Z])", "O", name)  # "HAI-0 RAYA"
    return re.sub(r"(?<=[A-Za-z.])\((?=\w)", " (", re.sub(r"\)(?=[A-Za-z])", ") ", name))


def _name_word(word: str) -> str:
    """A trade word OCR misread by one letter (two in nine or more), when exactly one is that
    close."""
    upper = word.upper()
    if upper in _NAME_WORDS or upper[:-1] in _NAME_WORDS:  # a plural: "RESTAURANTS"
        return word
    limit = 2 if len(upper) >= 9 else 1
    close = [w for w in _NAME_WORDS if abs(len(w) - len(upper)) <= limit]
    close = [w for w in close if edit_distance(upper, w) <= limit]
    if len(close) != 1:
        return word
    return close[0] if word.isupper() else close[0].title()


# words a shop's or firm's name ends with; OCR runs one into the word before it
_TRADE_WORDS = (
    "international|trading|enterprise|restaurant|restoran|marketing|distributors?|hardware"
    "|stationery|holdings|industries|supermarket|minimarket|pharmacy|bakery|bakeries"
    "|confectionery|electrical|machinery|engineering|services|corporation|handicraft"
)
# one glued after another too ("SANYUSTATIONERYSHOP" is SANYU STATIONERY SHOP)
_GLUED_TRADE_WORD = re.compile(
    rf"(?i)\b([A-Z]{{2,}}?)({_TRADE_WORDS})(?=\b|(?:{_TRADE_WORDS}|shop|store|house)\b)"
)
_GLUED_SHOP = re.compile(rf"(?i)({_TRADE_WORDS})(shop|store|house)\b")
# the trade words and a firm's words a name prints, for OCR's misread letters ("CONFECIEONERY",
# "HAMDICRAFT", "COMFANY"), put back as the place words of an address are
_NAME_WORDS = frozenset(
    [*re.sub(r"[?()]|s\?", "", _TRADE_WORDS).upper().split("|"), "COMPANY", "DISTRIBUTORS"]
)
# "SDN EHD", "Sdn.Rhd", "SDN 3HD", "SON BHD": the Malaysian legal form (Sendirian Berhad) with a letter misread
_BHD = re.compile(r"(?i)(?<=sdn)(\.?\s*)[e8r3d]hd\b")
_SDN = re.compile(r"(?i)\bs[o0]n(?=\.?\s*[be8r3d]hd\b)")


def _repair_legal_form(line: str) -> str:
    line = _SDN.sub(lambda m: "SDN" if m.group(0)[0].isupper() else "sdn", line)
    return _BHD.sub(lambda m: m.group(1) + ("BHD" if m.group(0)[-3:].isupper() else "Bhd"), line)


# after "CO." the rest of a Malaysian form: "AEON CO.(M) BHD.", "CO. SDN BHD"
_AFTER_CO = re.compile(rf"(?i)^\s*(?:\([A-Z]\)\s*)?(?:{LEGAL_FORMS})\b\.?")
# where a name on the first line ends and its registration begins: "HASHA PETROKIOSK
# Conpany No:_JH0632980-V"
_REGISTRATION_LABEL = re.compile(r"(?i)\s+(?:co[mn]pany|co\.?)\s*(?:n[o0]|reg)\b.*$")


# a line that cannot begin a company's name, so the name began on the lines above it: "CO. (M)
# SDN BHD", "ALAM) SDN BHD" (a bracket closed that the line did not open), "& SONS LTD"
_CONTINUES_NAME = re.compile(r"(?i)^(?:co\b|&|and\b|[^(]*\))")
_NAME_PART = re.compile(r"^\s*[A-Za-z][A-Za-z .,&'()-]*$")


# a company's registration number on its own line ("(317041-W)", "REG. N0:00168397-H",
# "Co. No. 113825-W"): the name is printed just above it
_REGISTRATION_LINE = re.compile(
    r"(?i)^\(?\s*(?:(?:co(?:mpany)?|reg(?:istration)?|roc)\.?\s*(?:n[o0]|reg)?\.?\s*[:.]?\s*)?"
    r"\d{5,8}\s*-\s*[A-Z]\s*\)?$"
)
# a till's greeting or heading, not a name: "Thank You. Please come again", "Weicome to ...",
# "SIMPLIFIED TAX INYOICE" as OCR reads it
_NOT_A_NAME = re.compile(r"(?i)\b(thank|we[li1]come|please|simplified|tax\s*in\w*ce)\b")


def _name_above_registration(lines: list[str]) -> tuple[str, float, int] | None:
    """The line above the first registration-number line near the top, when it reads as a
    name (a guess)."""
    for at, line in enumerate(lines[1:], 1):
        if _REGISTRATION_LINE.match(line.strip()):
            above = _repair_legal_form(lines[at - 1].strip())
            if (
                re.match(r"[A-Za-z]", above)
                and not re.search(r"\d{2}|:", above)
                and not _NOT_A_NAME.search(above)
            ):
                form = _LEGAL_FORM.match(above)
                return _tidy_name(form["name"] if form else above), CONF_GUESSED, at - 1
            return None
    return None


def _with_its_full_stop(name: str, lines: list[str]) -> str:
    """``WS Retail Services Pvt. Ltd`` as the page prints it elsewhere, ``... Pvt. Ltd.``: a
    legal form's abbreviation with its full stop when any line gives it one."""
    if re.search(r"(?i)\b(ltd|inc|corp|co|bhd|pvt|plc)$", name) and any(
        name + "." in line for line in lines
    ):
        return name + "."
    return name


# whom the bank transfer is to: the issuer ("Titulaire du compte : NETPRESSE", "Account
# name: ..."), in the languages invoices come in
_PAYEE = re.compile(
    r"(?i)\b(?:titulaire du compte|account holder|account name|beneficiary|payee"
    r"|kontoinhaber|begunstigde|ten name van)\s*:\s*(?P<name>[^\d:,;]{2,60}?)\s*$"
)
# a web address printed on the page ("www.azure-interior.com")
_SITE = re.compile(r"(?i)(?:\bwww\.|https?://(?:www\.)?)(?P<label>[a-z0-9-]+)\.")


def _payee(lines: list[str]) -> tuple[str, float, int] | None:
    """The account holder of the bank details an invoice asks to be paid to (a guess: a
    factoring firm's account would name it instead)."""
    for at, line in enumerate(lines):
        if m := _PAYEE.search(line.strip()):
            return m["name"].strip(), CONF_GUESSED, at
    return None


def _named_by_site(lines: list[str]) -> tuple[str, float, int] | None:
    """A line that spells the page's own web address in words ("Azure Interior" over
    ``www.azure-interior.com``): the firm's name where no legal form marks it (a guess)."""
    sites = {re.sub(r"[^a-z]", "", m["label"].lower()) for ln in lines for m in _SITE.finditer(ln)}
    sites.discard("")
    for at, line in enumerate(lines):
        s = line.strip()
        if len(s.split()) <= 5 and re.sub(r"[^a-z]", "", s.lower()) in sites:
            return s, CONF_GUESSED, at
    return None


def _company(lines: list[str]) -> tuple[str, float, int] | None:
    """The first line near the top that names a company by its legal form (cut after it: a
    registration number may follow on the line), as sure as a labelled value (on the SROIE
    development receipts the bundled model's re-reading turned 8 such right names wrong and
    fixed none), else the first line that reads as a name (a guess); with the line's index.
    A sender's line above the address window comes first: the window under it holds the
    customer's name ("iViveLabs Ltd."), which the page prints higher."""
    for at, line in enumerate(lines):
        if (m := _SENDER.match(line.strip())) and (form := _LEGAL_FORM.fullmatch(m["name"])):
            return form["name"].strip(), CONF_LABELLED if at < 12 else CONF_GUESSED, at
    for at, raw in enumerate(lines[:6]):
        line = _repair_legal_form(raw)
        if re.match(r"(?i)\s*(attn|attention|bill to|ship to|to|customer)\b\s*:", line):
            continue  # the customer's name, labelled
        if (m := _LEGAL_FORM.match(line.strip())) and not re.search(
            r"(?i)\bno\b\s*[:.]", m["name"]
        ):
            name = m["name"].strip()
            if re.search(r"(?i)\bco\.?$", name) and (
                rest := _AFTER_CO.match(line.strip()[m.end() :])
            ):
                name += rest.group(0)
            if _CONTINUES_NAME.match(name):  # "POPULAR BOOK" / "CO. (M) SDN BHD"
                above = list(itertools.takewhile(_NAME_PART.match, reversed(lines[:at])))[:2]
                name = " ".join([*(ln.strip() for ln in reversed(above)), name])
            return _with_its_full_stop(_tidy_name(name), lines), CONF_LABELLED, at
    if named := _name_above_registration(lines[:10]) or _payee(lines) or _named_by_site(lines):
        return named
    for at, line in enumerate(lines[:4]):
        s = _REGISTRATION_LABEL.sub("", line.strip())
        if at and lines[at - 1].rstrip().endswith(":"):
            continue  # a label's value on the line under it ("Guest Name:" / "Sanjay")
        if (
            re.match(r"[A-Z0-9]", s)
            and len(s.split()) <= 8
            and not re.search(r"\d{2}|#|:", s)
            and not re.search(r"(?i)\b(invoice|receipt|dear|date)\b", s)
            and not _NOT_A_NAME.search(s)
        ):
            return _tidy_name(s), CONF_GUESSED, at
    # no name heads the page (an invoice opening with notes): a line lower down that is only
    # a company's name with its legal form ("Amazon Web Services, Inc.")
    for at, line in enumerate(lines):
        s = line.strip()
        if (
            len(s.split()) <= 6
            and not re.search(r"[:\d@]", s)
            and (form := _LEGAL_FORM.fullmatch(s.rstrip(" ,")))
        ):
            return form["name"].strip(), CONF_GUESSED, at
    return None


_TAX_NAME = r"(?i)(?<![a-z])(?:vat|tva|btw|mwst|ust|iva|gst|igst|sst|sales tax|tax(?:es)?)\b"
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
        if re.search(_TAX_NAME, line) and "%" in line and not re.search(r"\d", line):
            for row in lines[at + 1 : at + 11]:
                if m := re.search(r"(?<![\d.,])" + _PERCENT, row):
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
        iso = sorted(date_candidates(_month_apart(raw)))
        return iso[0] if len(iso) == 1 else raw
    return raw.strip(" :")


def extract(
    text: str, requested: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, float]]:
    """(fields, confidences) from plain text; custom mode returns exactly ``requested``."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    found: dict[str, tuple[Any, float]] = {"document_type": (classify(text), CONF_GUESSED)}
    company = _company(lines)
    if company:
        found["company"] = company[:2]
    # the address is under the name when the name heads the page
    if address := read_address(lines, company[2] if company and company[2] < 6 else 0):
        text_read, labelled = address
        found["address"] = (text_read, CONF_LABELLED if labelled else CONF_GUESSED)
    if currency := _currency(text):
        found["currency"] = (currency, CONF_GUESSED)
    for name, labels in _LABELS.items():
        pattern = _AMOUNT if name in _AMOUNT_FIELDS else DATE if name in _DATE_FIELDS else None
        if name in {"invoice_number", "receipt_number"}:
            pattern = r"[A-Z0-9][A-Z0-9-/]*\d[A-Z0-9-/]*"
        if name == "total":
            raw = _total(lines)
        else:
            accept = _an_amount_not_a_number if name in _AMOUNT_FIELDS else None
            raw = _after_label(lines, labels, pattern, last=name in _AMOUNT_FIELDS, accept=accept)
        value = _value(name, raw)
        if value is not None:
            found[name] = (value, CONF_LABELLED)
    if "total" not in found and "subtotal" in found and classify(text) == "receipt":
        # a till that prints only "SUBTOTAL: 28.60" before the payment lines: nothing is
        # added after it, so it is the amount paid (a guess)
        found["total"] = (found["subtotal"][0], CONF_GUESSED)
    if rate := _tax_rate(lines):
        found["tax_rate"] = rate
    if "date" not in found and (unlabelled := _first_date(lines)):
        found["date"] = (unlabelled, CONF_GUESSED)  # receipts print "19/01/17 10:48" unlabelled
    if requested is None:
        return {k: v for k, (v, _) in found.items()}, {k: c for k, (_, c) in found.items()}
    fields: dict[str, Any] = {}
    confidences: dict[str, float] = {}
    for name in requested:
        key = _SYNONYMS.get(name.lower().replace(" ", "_"), name.lower().replace(" ", "_"))
        value, conf = found.get(key, (None, CONF_MISSING))
        fields[name], confidences[name] = value, conf if value is not None else CONF_MISSING
    return fields, confidences
