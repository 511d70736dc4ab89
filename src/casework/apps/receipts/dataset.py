"""Evaluation cases from the labels of imported receipts; deterministic.

The expected verdicts come from the receipts' labels only, never from the rules the tools use
(a case set picked where a rule fires scores the rule twice). For every word of a receipt that
carries a VALID label:

* ``gold``: the word's own label suggested, expected VALID;
* ``confusion``: a label commonly confused with it (``CONFUSIONS``) suggested, expected
  INVALID. Which one is drawn by an RNG seeded with the receipt's key, the line and the word,
  so a case never changes when other receipts are added.

The six third-party receipts' labels are noisy; ``data/receipts/gold_audit.jsonl`` is a
reading of every one of their labels against the label definitions (right, wrong or unsure;
by an engineering agent session, not a domain annotator, without running the tools), and a
case built on an audited label carries the verdict as ``metadata.gold_audit``, so a report
shows accuracy on the labels the reading found right.

``build_cases(repo)`` works on any store (the user's own imported receipts);
``python -m casework.apps.receipts.data.make_cases`` regenerates ``data/eval/cases.jsonl`` from the
bundled receipts in a temporary store (a test checks the file is current).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from casework.apps.receipts.models import Receipt, ValidationStatus
from casework.apps.receipts.repository import ReceiptsRepository

__all__ = [
    "AUDIT_PATH",
    "CASES_PATH",
    "CONFUSIONS",
    "SEED",
    "build_cases",
    "read_audit",
    "write_cases",
]

CASES_PATH = Path(__file__).parent / "data" / "eval" / "cases.jsonl"
AUDIT_PATH = Path(__file__).parent / "data" / "receipts" / "gold_audit.jsonl"
SEED = 2679
REASON = "A labelling pass suggested this label."

# The labels each label is commonly mistaken for on receipts: amounts that sit in the same
# column (totals, prices), header fields printed next to each other, date and time stamps,
# card and loyalty numbers. Every label of the taxonomy has at least one entry.
CONFUSIONS: dict[str, tuple[str, ...]] = {
    "MERCHANT_NAME": ("PRODUCT_NAME", "ADDRESS_LINE"),
    "BUSINESS_NAME": ("MERCHANT_NAME", "PRODUCT_NAME"),
    "ADDRESS_LINE": ("MERCHANT_NAME", "PHONE_NUMBER"),
    "PHONE_NUMBER": ("ADDRESS_LINE", "LOYALTY_ID"),
    "WEBSITE": ("MERCHANT_NAME", "ADDRESS_LINE"),
    "STORE_HOURS": ("TIME", "DATE"),
    "DATE": ("TIME", "STORE_HOURS"),
    "TIME": ("DATE", "STORE_HOURS"),
    "PAYMENT_METHOD": ("LOYALTY_ID", "PRODUCT_NAME"),
    "LOYALTY_ID": ("PAYMENT_METHOD", "PHONE_NUMBER"),
    "COUPON": ("DISCOUNT", "PRODUCT_NAME"),
    "DISCOUNT": ("LINE_TOTAL", "COUPON"),
    "PRODUCT_NAME": ("MERCHANT_NAME", "COUPON"),
    "QUANTITY": ("UNIT_PRICE", "LINE_TOTAL"),
    "UNIT_PRICE": ("LINE_TOTAL", "QUANTITY"),
    "LINE_TOTAL": ("UNIT_PRICE", "SUBTOTAL"),
    "SUBTOTAL": ("GRAND_TOTAL", "LINE_TOTAL"),
    "TAX": ("SUBTOTAL", "LINE_TOTAL"),
    "GRAND_TOTAL": ("SUBTOTAL", "CHANGE"),
    "CHANGE": ("GRAND_TOTAL", "DISCOUNT"),
}


def _source(receipt: Receipt) -> str:
    """Provenance of a case: the file the receipt was imported from."""
    return Path(receipt.source.split("[")[0]).name or receipt.source


Audit = dict[tuple[str, int, int, str], str]
"""(slug, line id, word id, label) -> the reading's verdict on that label."""


def read_audit(path: Path = AUDIT_PATH) -> Audit:
    """The gold-label audit: each line ``{"slug", "line_id", "word_id", "label", "verdict"}``."""
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {(r["slug"], r["line_id"], r["word_id"], r["label"]): r["verdict"] for r in rows}


def _case(
    receipt: Receipt,
    line: tuple[int, str],
    word_id: int,
    word: str,
    gold: str,
    suggested: str,
    audit: Audit,
) -> dict[str, Any]:
    line_id, line_text = line
    kind = "gold" if suggested == gold else "confusion"
    metadata = {"kind": kind, "pair": f"{gold}->{suggested}", "source": _source(receipt)}
    if verdict := audit.get((receipt.slug, line_id, word_id, gold)):
        metadata["gold_audit"] = verdict
    return {
        "id": f"{receipt.slug}-L{line_id}-W{word_id}-{suggested}",
        "inputs": {
            "receipt": receipt.key,
            "slug": receipt.slug,
            "line_id": line_id,
            "word_id": word_id,
            "word": word,
            "suggested_label": suggested,
            "merchant": receipt.merchant_name,
            "line": line_text,
            "reason": REASON,
        },
        "expected": {"verdict": "VALID" if kind == "gold" else "INVALID", "gold_label": gold},
        "metadata": metadata,
    }


def _receipts(repo: ReceiptsRepository, slugs: list[str] | None) -> list[Receipt]:
    if slugs is None:
        return repo.list_receipts()
    return [repo.resolve_receipt(slug) for slug in dict.fromkeys(slugs)]  # raises NotFoundError


def build_cases(
    repo: ReceiptsRepository, slugs: list[str] | None = None, audit: Audit | None = None
) -> list[dict]:
    """A gold and a confusion case for every VALID-labelled word of the receipts named by
    ``slugs`` (slugs or keys; all imported receipts when None), shuffled deterministically;
    ``audit`` marks the cases whose gold label it read."""
    audit = audit or {}
    cases: dict[str, dict] = {}
    for receipt in _receipts(repo, slugs):
        lines = {ln.line_id: ln.text for ln in repo.lines(receipt.id)}
        gold: dict[tuple[int, int, str], set[str]] = defaultdict(set)
        for lab in repo.current_labels(receipt_pk=receipt.id, statuses=[ValidationStatus.VALID]):
            gold[(lab.line_id, lab.word_id, lab.word_text)].add(lab.label_type)
        for (line_id, word_id, word), labels in sorted(gold.items()):
            for label in sorted(labels):
                line = (line_id, lines.get(line_id, ""))
                ok = _case(receipt, line, word_id, word, label, label, audit)
                cases.setdefault(ok["id"], ok)
                # A word may rightly carry two labels: never call one of them wrong.
                options = [c for c in CONFUSIONS.get(label, ()) if c not in labels]
                if options:
                    rng = random.Random(f"{SEED}:{receipt.key}:{line_id}:{word_id}:{label}")
                    wrong = _case(receipt, line, word_id, word, label, rng.choice(options), audit)
                    cases.setdefault(wrong["id"], wrong)
    out = sorted(cases.values(), key=lambda c: c["id"])
    random.Random(SEED).shuffle(out)
    return out


def write_cases(cases: list[dict], path: Path = CASES_PATH) -> int:
    """Write ``cases`` as JSONL (one JSON object a line); returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8"
    )
    return len(cases)
