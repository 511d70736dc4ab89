"""Comparing extracted values with gold ones: normalisation and field-level scores.

Pure functions over (expected dict, output dict); the evaluation harness wires them in.
Values compare after normalising case and spaces (commas and full stops count as spaces in
text: ``NO.31G&33G,`` is ``no 31g&33g``), amounts and percentages as numbers
(currency symbols and thousands separators dropped; ``21 %`` is ``21.00%``), and dates to ISO 8601 from day-first and month-first forms
(an ambiguous ``03/04/2024`` matches either reading).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

__all__ = [
    "as_amount",
    "date_candidates",
    "field_scores",
    "flatten",
    "lookup",
    "normalize_text",
    "normalize_words",
    "values_match",
]

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            # English, then the German, Dutch and French names invoices print
            ("jan", "january", "januar", "januari", "janvier"),
            ("feb", "february", "februar", "februari", "février", "fevrier"),
            ("mar", "march", "märz", "maerz", "maart", "mars"),
            ("apr", "april", "avril"),
            ("may", "mai", "mei"),
            ("jun", "june", "juni", "juin"),
            ("jul", "july", "juli", "juillet"),
            ("aug", "august", "augustus", "août", "aout"),
            ("sep", "sept", "september", "septembre"),
            ("oct", "october", "oktober", "okt", "octobre"),
            ("nov", "november", "novembre"),
            ("dec", "december", "dezember", "dez", "décembre", "decembre"),
        ]
    )
    for m in names
}
# a currency sign or code next to an amount ("RM 29.70" is Malaysian ringgit, as SROIE writes it)
_CURRENCY = re.compile(
    r"(?i)(?:[$€£¥₹]|(?<![a-z])(?:usd|eur|gbp|chf|jpy|cad|aud|sgd|inr|myr|rm|s\$)(?![a-z]))"
)
_AMOUNT = re.compile(r"^[+-]?(\d{1,3}(?:[,\s]\d{3})+|\d+)(?:\.(\d+))?$")
_AMOUNT_EU = re.compile(r"^[+-]?(\d{1,3}(?:[.\s]\d{3})+|\d+),(\d{1,2})$")


def normalize_text(value: Any) -> str:
    """Case and spaces: ``"  ACME  Ltd "`` -> ``"acme ltd"``."""
    return " ".join(str(value).split()).casefold()


_SEPARATORS = re.compile(r"[\s,.]+")


def normalize_words(value: Any) -> str:
    """Case, spaces, and commas and full stops as spaces: ``"NO. 2,JALAN X."`` -> ``"no 2
    jalan x"``. How the text compares with gold. Annotators write the same printed separators
    differently: of the 32 shops whose SROIE gold address is written more than one way, 14
    differ only in commas, full stops and spaces (``NO.2,`` / ``NO. 2,``; ``NO 7,`` / ``NO
    7.``; ``PANAS, SETAPAK`` / ``PANAS. SETAPAK``). Every other character still counts
    (``&``, ``/``, ``-``, brackets, letters and digits)."""
    return _SEPARATORS.sub(" ", str(value).casefold()).strip()


def as_amount(value: Any) -> float | None:
    """``"£1,234.50"``, ``"1.234,50 EUR"``, ``45.1`` -> the number; None when it is not an amount."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return round(float(value), 2)
    s = _CURRENCY.sub("", str(value)).strip().replace(" ", "")
    negative = s.startswith("(") and s.endswith(")")
    s = s.strip("()")
    if m := _AMOUNT.match(s):
        number = float(m.group(1).replace(",", "") + "." + (m.group(2) or "0"))
    elif m := _AMOUNT_EU.match(s):
        number = float(m.group(1).replace(".", "") + "." + m.group(2))
    else:
        return None
    number = -number if negative or (s.startswith("-") and number > 0) else number
    return round(number, 2)


def _valid(y: int, m: int, d: int) -> str | None:
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return None


def date_candidates(value: Any) -> set[str]:
    """Every ISO date a written date can mean: day-first and month-first for ``03/04/2024``."""
    s = normalize_text(value).replace(",", " ").replace(".", "/")
    s = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", s)
    out: set[str] = set()
    if m := re.fullmatch(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:t.*)?", s):
        out.add(_valid(int(m[1]), int(m[2]), int(m[3])) or "")
    elif m := re.fullmatch(r"(\d{1,2})[-/](\d{1,2})[-/](\d{2}|\d{4})", s):
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        y = y + 2000 if y < 100 else y
        out |= {_valid(y, b, a) or "", _valid(y, a, b) or ""}
    else:
        words = s.replace("-", " ").replace("/", " ").split()
        nums = [w for w in words if w.isdigit()]
        months = [_MONTHS[w] for w in words if w in _MONTHS]
        if len(months) == 1 and len(nums) == 2:
            if len(nums[0]) == 4:  # "2024 March 5"
                year, day = int(nums[0]), int(nums[1])
            else:  # "5 March 2024", "March 5, 2024", "24 MAR 18" (a two-digit year is 20YY)
                day, year = int(nums[0]), int(nums[1])
                year = year + 2000 if year < 100 else year
            out.add(_valid(year, months[0], day) or "")
    out.discard("")
    return out


def _percent(value: Any) -> float | None:
    """``"14.50%"``, ``"21 %"``, ``"7,7%"`` -> the number; None when it is not a percentage."""
    m = re.fullmatch(r"\s*(\d{1,3}(?:[.,]\d+)?)\s*%\s*", str(value))
    return float(m.group(1).replace(",", ".")) if m else None


def values_match(gold: Any, predicted: Any) -> bool:
    """Equal after normalisation (amounts, dates, then text); lists compare element-wise."""
    if gold is None or predicted is None:
        return gold is None and predicted is None
    if isinstance(gold, list) and isinstance(predicted, list):
        return len(gold) == len(predicted) and all(
            values_match(g, p) for g, p in zip(gold, predicted, strict=True)
        )
    if isinstance(gold, dict) and isinstance(predicted, dict):
        return gold.keys() == predicted.keys() and all(
            values_match(gold[k], predicted[k]) for k in gold
        )
    gold_dates = date_candidates(gold)
    if gold_dates:
        return bool(gold_dates & date_candidates(predicted))
    ga, pa = as_amount(gold), as_amount(predicted)
    if ga is not None and pa is not None:
        return abs(ga - pa) < 0.005
    gp, pp = _percent(gold), _percent(predicted)
    if gp is not None and pp is not None:
        return abs(gp - pp) < 0.005
    return normalize_words(gold) == normalize_words(predicted)


def flatten(fields: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"vendor": {"name": "A"}}`` -> ``{"vendor.name": "A"}``; lists stay values."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out |= flatten(value, name + ".")
        else:
            out[name] = value
    return out


def lookup(predicted: dict[str, Any], name: str) -> tuple[bool, Any]:
    """A gold field found in the output by exact name, flattened path or case-insensitive name."""
    flat = flatten(predicted)
    if name in predicted:
        return True, predicted[name]
    if name in flat:
        return True, flat[name]
    wanted = normalize_text(name).replace(" ", "_")
    for key, value in flat.items():
        last = key.rsplit(".", 1)[-1]
        if normalize_text(last).replace(" ", "_") == wanted:
            return True, value
    return False, None


def field_scores(expected: dict[str, Any], output: dict[str, Any]) -> dict[str, Any]:
    """Field-level scores of one document: gold ``expected["gold"]`` vs ``output["fields"]``.

    A gold field with a non-null value counts as a true positive when the output has it with a
    matching value; a wrong value is both a false positive and a false negative; a missing
    one a false negative. A gold null ("not in the document") is matched by a null or absence.
    Precision is over the gold names only (extra fields in auto mode are not penalised).
    """
    gold: dict[str, Any] = expected.get("gold", {})
    predicted: dict[str, Any] = output.get("fields") or {}
    tp = fp = fn = 0
    per_field: dict[str, bool] = {}
    for name, value in gold.items():
        found, got = lookup(predicted, name)
        if value is None:
            per_field[name] = not found or got is None
            if found and got is not None:
                fp += 1
            continue
        ok = found and values_match(value, got)
        per_field[name] = ok
        if ok:
            tp += 1
        else:
            fn += 1
            if found and got is not None:
                fp += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "exact": per_field,
    }
