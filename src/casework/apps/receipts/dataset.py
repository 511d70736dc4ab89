"""Build the evaluation set (``data/eval/cases.jsonl``) from the bundled receipts; deterministic.

Run ``python -m casework.apps.receipts.dataset`` to regenerate (a test checks the file is
current). Each case asks whether a suggested label is right for one word:

* ``correct``: the word's own label (expected VALID) — only labels that pass plausibility
  checks, since the third-party samples are noisy (``trusted``);
* ``confusion``: a plausible wrong label (expected INVALID): UNIT_PRICE vs LINE_TOTAL,
  SUBTOTAL vs GRAND_TOTAL, MERCHANT_NAME vs PRODUCT_NAME, DATE vs TIME, card vs loyalty
  numbers, ...;
* ``context``: cases only the context settles — a number on a "Guests: 3" line is not a
  QUANTITY, a tender amount is not a LINE_TOTAL, a tax rate is not TAX, the same amount is
  UNIT_PRICE in one column and LINE_TOTAL in the next.

Words are addressed by receipt key, line and word id as the importer numbers them.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

from casework.apps.receipts.features import line_keywords, normalize, sections, word_shape
from casework.apps.receipts.importer import ParsedLine, ParsedReceipt, ParsedWord, parse_file

__all__ = ["CASES_PATH", "build_cases", "main", "trusted", "write_cases"]

CASES_PATH = Path(__file__).parent / "data" / "eval" / "cases.jsonl"
OWN = {"ralphs", "chevron", "walgreens", "casaverde", "target", "bluebottle"}
PER_LABEL = 1
"""Words per (receipt, label) in the correct/confusion cases, so no receipt dominates."""
REASON = "A labelling pass suggested this label."

CONFUSIONS: dict[str, list[str]] = {
    "MERCHANT_NAME": ["PRODUCT_NAME"],
    "ADDRESS_LINE": ["MERCHANT_NAME", "PHONE_NUMBER"],
    "PHONE_NUMBER": ["ADDRESS_LINE", "LOYALTY_ID"],
    "WEBSITE": ["MERCHANT_NAME"],
    "STORE_HOURS": ["TIME", "DATE"],
    "DATE": ["TIME"],
    "TIME": ["DATE"],
    "PAYMENT_METHOD": ["LOYALTY_ID"],
    "LOYALTY_ID": ["PAYMENT_METHOD", "PHONE_NUMBER"],
    "COUPON": ["DISCOUNT", "PRODUCT_NAME"],
    "DISCOUNT": ["LINE_TOTAL", "TAX"],
    "PRODUCT_NAME": ["MERCHANT_NAME", "QUANTITY"],
    "QUANTITY": ["UNIT_PRICE", "LINE_TOTAL"],
    "UNIT_PRICE": ["LINE_TOTAL"],
    "LINE_TOTAL": ["UNIT_PRICE"],
    "SUBTOTAL": ["GRAND_TOTAL"],
    "TAX": ["SUBTOTAL", "GRAND_TOTAL"],
    "GRAND_TOTAL": ["SUBTOTAL"],
    "CHANGE": ["GRAND_TOTAL", "DISCOUNT"],
}

# (slug, word text, line must contain) -> excluded from correct/confusion cases: gold labels
# of the samples that are wrong or a matter of convention, and words whose label is arguable.
EXCLUDE = {
    ("cvs", "CHARGE", "CHARGE"),
    ("cvs", "Prescription", "Prescription"),
    ("cvs", "20.00N", "F1 RX"),
    ("cvs", "20.00", "Prescription Eligible"),
    ("cvs", "04/08", "balances"),
    ("innout", "2.46", "Amount Due"),
    ("innout", "Dbl", "Dbl"),
    ("innout", "-Dbl", "Dbl"),
    ("innout", "try", "Cheese"),
    ("wildfork", "#9033-03-AA51584", "Ticket"),
    ("wildfork", "31b", "Ground"),
    ("wildfork", "Po", "Ground"),
    ("wildfork", "VS", "Ground"),
    ("wildfork", "85%", "Ground"),
    ("target", "1LB", "STRAWBERRIES"),
    ("target", "Target", "Circle"),
    ("target", "Circle", "Circle ****"),
    ("walgreens", "myWalgreens", "myWalgreens"),
    ("walgreens", "24CT", "NYQUIL"),
    ("walgreens", "2000IU", "VITAMIN"),
    ("ralphs", "6PK", "PAPER"),
    ("costco", "2DZ", "KS FR"),
    ("costco", "680TC", "KS"),
    ("traderjoes", "3", "CHEESE SPINACH"),
    ("sprouts", "6%", "MLK"),
    ("sprouts", "A2/A2", "MLK"),
}

# Context cases: (slug, word, line must contain ("$..." = the last such line), suggested
# label, expected verdict, note).
CONTEXT = [
    (
        "casaverde",
        "3",
        "Guests",
        "QUANTITY",
        "INVALID",
        "the number of guests, not an item quantity",
    ),
    ("casaverde", "14", "Table", "QUANTITY", "INVALID", "a table number"),
    ("chevron", "06", "PUMP", "QUANTITY", "INVALID", "a pump number"),
    ("costco", "21", "ITEMS", "GRAND_TOTAL", "INVALID", "an item count, not an amount"),
    ("walgreens", "A=9.5%", "SALES TAX", "TAX", "INVALID", "the tax rate, not the tax amount"),
    ("target", "9.500%", "CA TAX", "TAX", "INVALID", "the tax rate, not the tax amount"),
    ("casaverde", "9.5%", "Tax", "TAX", "INVALID", "the tax rate, not the tax amount"),
    ("costco", "9.75%", "Tax", "TAX", "INVALID", "the tax rate, not the tax amount"),
    (
        "target",
        "$33.89",
        "CA TAX",
        "SUBTOTAL",
        "INVALID",
        "the taxable base printed on the tax line",
    ),
    ("wildfork", "28.00", "VISA", "LINE_TOTAL", "INVALID", "the tendered amount, not an item line"),
    ("ralphs", "39.33", "VISA", "LINE_TOTAL", "INVALID", "the tendered amount, not an item line"),
    ("bluebottle", "21.90", "Apple", "SUBTOTAL", "INVALID", "the tendered amount after tax"),
    ("chevron", "$72.83", "MASTERCARD", "LINE_TOTAL", "INVALID", "the tendered amount"),
    ("ralphs", "TOTAL", "SAVINGS", "GRAND_TOTAL", "INVALID", "a keyword of the savings line"),
    ("chevron", "TOTAL", "FUEL", "GRAND_TOTAL", "INVALID", "a keyword of the fuel line"),
    (
        "chevron",
        "$60.83",
        "FUEL",
        "GRAND_TOTAL",
        "INVALID",
        "the fuel line total, not the grand total",
    ),
    ("ralphs", "1.50", "SAVINGS", "GRAND_TOTAL", "INVALID", "total savings, not the amount due"),
    ("ralphs", "0.50-", "SAVINGS", "LINE_TOTAL", "INVALID", "a discount, not an item"),
    ("casaverde", "-6.00", "Happy", "LINE_TOTAL", "INVALID", "a discount, not an item"),
    ("casaverde", "Marisol", "Server", "MERCHANT_NAME", "INVALID", "the server's name"),
    ("bluebottle", "Devon", "Cashier", "MERCHANT_NAME", "INVALID", "the cashier's name"),
    (
        "bluebottle",
        "Coffee",
        "Drip",
        "MERCHANT_NAME",
        "INVALID",
        "a product word that is also in the merchant name",
    ),
    (
        "walgreens",
        "********8821",
        "myWalgreens",
        "PAYMENT_METHOD",
        "INVALID",
        "a masked loyalty number, not a card",
    ),
    (
        "ralphs",
        "************4417",
        "Rewards",
        "PAYMENT_METHOD",
        "INVALID",
        "a masked loyalty number, not a card",
    ),
    (
        "target",
        "****5521",
        "Circle",
        "PAYMENT_METHOD",
        "INVALID",
        "a masked loyalty number, not a card",
    ),
    (
        "ralphs",
        "************2291",
        "CARD",
        "LOYALTY_ID",
        "INVALID",
        "a masked card number, not loyalty",
    ),
    (
        "walgreens",
        "XXXXXXXXXXXX5524",
        "CARD#",
        "LOYALTY_ID",
        "INVALID",
        "a masked card number, not loyalty",
    ),
    ("chevron", "12.417", "GAL", "LINE_TOTAL", "INVALID", "gallons, not money"),
    ("ralphs", "1.42", "lb", "UNIT_PRICE", "INVALID", "a weight, not a price"),
    (
        "traderjoes",
        "TRADER",
        "$JOE'S",
        "MERCHANT_NAME",
        "VALID",
        "the merchant under the thank-you line",
    ),
    ("ralphs", "Ralphs", "Thank", "MERCHANT_NAME", "VALID", "the merchant in the thank-you line"),
    ("chevron", "CHEVRON", "THANK", "MERCHANT_NAME", "VALID", "the merchant in the thank-you line"),
    (
        "wildfork",
        "14.00",
        "2656",
        "UNIT_PRICE",
        "VALID",
        "left price column (Price), first of two equal amounts",
    ),
    ("chevron", "$4.899", "GAL", "UNIT_PRICE", "VALID", "price per gallon"),
    ("chevron", "12.417", "GAL", "QUANTITY", "VALID", "gallons pumped"),
    ("ralphs", "1.42", "lb", "QUANTITY", "VALID", "a weight"),
    ("casaverde", "15.50", "@", "UNIT_PRICE", "VALID", "price each"),
    ("walgreens", "********8821", "myWalgreens", "LOYALTY_ID", "VALID", "a masked loyalty number"),
    ("walgreens", "XXXXXXXXXXXX5524", "CARD#", "PAYMENT_METHOD", "VALID", "a masked card number"),
    ("sprouts", "0.00", "CHANGE", "CHANGE", "VALID", "change given"),
]

_PAYMENT_WORDS = {
    "visa",
    "mastercard",
    "debit",
    "credit",
    "amex",
    "discover",
    "contactless",
    "eftdebit",
    "applepay",
    "apple",
    "pay",
    "cash",
}
_MONTHS = (
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
    "sun",
)


def _slug(r: ParsedReceipt) -> str:
    return r.slug


def _excluded(slug: str, w: ParsedWord, line: ParsedLine) -> bool:
    return any(s == slug and t == w.text and c in line.text for s, t, c in EXCLUDE)


def trusted(r: ParsedReceipt, w: ParsedWord, line: ParsedLine, section: str) -> bool:
    """Whether a word's stored label is plausible enough to be a VALID answer."""
    label, text = w.label, w.text
    if label is None or _excluded(r.slug, w, line):
        return False
    shape = word_shape(text)
    kws = set(line_keywords(line.text))
    n = normalize(text)
    if label == "MERCHANT_NAME":
        return shape == "alpha" and n in {normalize(t) for t in r.merchant_name.split()}
    if label == "ADDRESS_LINE":
        return section == "header" and n in {
            normalize(t) for t in r.place.address.replace(",", " ").split()
        }
    if label == "PHONE_NUMBER":
        return section == "header" and bool(n) and n in normalize(r.place.phone)
    if label == "WEBSITE":
        return shape == "url"
    if label == "STORE_HOURS":
        return True
    if label == "DATE":
        return shape == "date" or (
            shape == "alpha"
            and n.startswith(_MONTHS)
            and any(word_shape(t) == "integer" and len(t) == 4 for t in line.text.split())
        )
    if label == "TIME":
        return shape == "time" or (
            n in ("am", "pm") and any(word_shape(t) == "time" for t in line.text.split())
        )
    if label == "PAYMENT_METHOD":
        return section != "footer" and (shape == "masked_number" or n in _PAYMENT_WORDS)
    if label == "LOYALTY_ID":
        return shape in ("integer", "masked_number") and len(text) >= 6
    if label == "COUPON":
        return r.slug in OWN or (any(c.isdigit() for c in text) and len(text) >= 8)
    if label == "DISCOUNT":
        return shape in ("amount", "negative_amount")
    if label == "PRODUCT_NAME":
        return shape == "alpha" and len(text) >= 3 and section == "items"
    if label == "QUANTITY":
        return (shape == "integer" and len(text) <= 3) or (r.slug in OWN and shape == "amount")
    if label in ("UNIT_PRICE", "LINE_TOTAL"):
        return (
            shape == "amount"
            and r.slug != "innout"
            and not kws & {"TOTAL", "SUBTOTAL", "TAX", "CHANGE", "BALANCE"}
        )
    if label == "SUBTOTAL":
        return shape == "amount" and "SUBTOTAL" in kws
    if label == "TAX":
        return shape == "amount" and "TAX" in kws
    if label == "GRAND_TOTAL":
        return (
            shape == "amount"
            and bool(kws & {"TOTAL", "BALANCE", "DUE", "AMOUNT"})
            and "SUBTOTAL" not in kws
        )
    if label == "CHANGE":
        return shape == "amount" and "CHANGE" in kws
    return False


def _case(
    r: ParsedReceipt, w: ParsedWord, suggested: str, verdict: str, kind: str, note: str = ""
) -> dict:
    return {
        "id": f"{r.slug}-L{w.line_id}-W{w.word_id}-{suggested}",
        "inputs": {
            "receipt": r.key,
            "slug": r.slug,
            "line_id": w.line_id,
            "word_id": w.word_id,
            "word": w.text,
            "suggested_label": suggested,
            "merchant": r.merchant_name,
            "reason": REASON,
        },
        "expected": {"verdict": verdict, "gold_label": w.label},
        "metadata": {
            "kind": kind,
            "pair": f"{w.label or 'O'}->{suggested}",
            "source": "casework" if r.slug in OWN else "sample",
            **({"note": note} if note else {}),
        },
    }


def _find(r: ParsedReceipt, text: str, contains: str) -> tuple[ParsedWord, ParsedLine]:
    """The word on the first line containing ``contains`` (``$...``: the last such line)."""
    lines = r.lines
    if contains.startswith("$"):
        contains, lines = contains[1:], list(reversed(r.lines))
    for line in lines:
        if contains in line.text:
            for w in line.words:
                if w.text == text:
                    return w, line
    raise ValueError(f"{r.slug}: no word {text!r} on a line containing {contains!r}")


def build_cases(receipts: list[ParsedReceipt] | None = None) -> list[dict]:
    if receipts is None:
        from casework.apps.receipts.service import bundled_receipt_files

        receipts = [rec for p in bundled_receipt_files() for rec in parse_file(p)]
    rng = random.Random(2679)
    cases: dict[str, dict] = {}
    by_slug = {r.slug: r for r in receipts}
    for slug, text, contains, suggested, verdict, note in CONTEXT:
        if slug not in by_slug:
            continue
        r = by_slug[slug]
        w, _ = _find(r, text, contains)
        case = _case(r, w, suggested, verdict, "context", note)
        cases[case["id"]] = case
    for r in receipts:
        secs = sections([ln.text for ln in r.lines])
        pool: dict[str, list[ParsedWord]] = defaultdict(list)
        for line, sec in zip(r.lines, secs, strict=True):
            for w in line.words:
                if trusted(r, w, line, sec):
                    pool[w.label or ""].append(w)
        for label in sorted(pool):
            words = pool[label]
            picked = rng.sample(words, min(PER_LABEL, len(words)))
            for w in sorted(picked, key=lambda x: (x.line_id, x.word_id)):
                ok = _case(r, w, label, "VALID", "correct")
                cases.setdefault(ok["id"], ok)
                options = [c for c in CONFUSIONS.get(label, []) if c != label]
                if options:
                    wrong = _case(r, w, rng.choice(options), "INVALID", "confusion")
                    cases.setdefault(wrong["id"], wrong)
    out = sorted(cases.values(), key=lambda c: c["id"])
    rng.shuffle(out)
    return out


def write_cases(path: Path = CASES_PATH) -> int:
    cases = build_cases()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8"
    )
    return len(cases)


def main() -> None:
    n = write_cases()
    print(f"wrote {n} cases to {CASES_PATH}")


if __name__ == "__main__":
    main()
