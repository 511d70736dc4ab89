"""Deterministic word and line features."""

from __future__ import annotations

import pytest

from casework.apps.receipts.rules import (
    amount_role,
    context_checks,
    line_keywords,
    sections,
    word_shape,
)
from casework.apps.receipts.vectors import effective_label


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("13.99", "amount"),
        ("$27.71", "amount"),
        ("4.30-", "negative_amount"),
        ("-6.00", "negative_amount"),
        ("9.75%", "percent"),
        ("10/04/2025", "date"),
        ("16:51", "time"),
        ("(805)917-4200", "phone"),
        ("www.traderjoes.com", "url"),
        ("XXXXXXXXXXXX8712", "masked_number"),
        ("111892505639", "integer"),
        ("TOTAL", "alpha"),
        ("#117", "alnum"),
        ("**", "symbol"),
    ],
)
def test_word_shape(text, shape):
    assert word_shape(text) == shape


@pytest.mark.parametrize(
    ("text", "line", "rightmost", "amounts", "section", "role"),
    [
        ("303.83", "** TOTAL 303.83", True, 1, "totals", "GRAND_TOTAL"),
        ("289.00", "SUBTOTAL 289.00", True, 1, "totals", "SUBTOTAL"),
        ("14.00", "2656 1 14.00 14.00", False, 2, "items", "UNIT_PRICE"),
        ("0.59", "2 @ 0.59", True, 1, "items", "UNIT_PRICE"),
        ("1.42", "1.42 lb @ 2.99 /lb", False, 2, "items", "QUANTITY"),
        ("6.99", "E 4032 WATERMELON 6.99", True, 1, "items", "LINE_TOTAL"),
        ("28.00", "VISA 28.00", True, 1, "footer", "tender"),
        ("9.5%", "Tax 9.5% 7.26", False, 2, "totals", "rate"),
        ("1.50", "TOTAL SAVINGS 1.50", True, 1, "totals", "DISCOUNT"),
        ("TOTAL", "** TOTAL 303.83", False, 1, "totals", None),
    ],
)
def test_amount_role(text, line, rightmost, amounts, section, role):
    assert (
        amount_role(text, line, rightmost=rightmost, amounts_on_line=amounts, section=section)
        == role
    )


def test_context_checks():
    assert context_checks("TIME", "05/02/2026", "05/02/2026 9:41 AM", "date", None)[
        "conflicts"
    ] == ["TIME is wrong: a word shaped like date cannot be TIME"]
    assert context_checks("QUANTITY", "3", "Server: Marisol Table 14 Guests: 3", "integer", None)[
        "conflicts"
    ] == ["QUANTITY is wrong: the line says this number is a guest count, not an item quantity"]
    ok = context_checks("LOYALTY_ID", "****4417", "Rewards Card ****4417", "masked_number", None)
    assert ok == {
        "supports": ["LOYALTY_ID fits: the line names a loyalty program"],
        "conflicts": [],
    }


def test_line_keywords_and_sections():
    assert line_keywords("Sub Total: 28.00") == ["SUBTOTAL"]
    assert line_keywords("TOTAL TAX 14.83") == ["TOTAL", "TAX"]
    lines = ["SHOP", "MILK 2.00", "TOTAL 2.00", "THANK YOU"]
    assert sections(lines) == ["header", "items", "totals", "footer"]


def test_effective_label_prefers_current_valid():
    from datetime import UTC, datetime

    from casework.apps.receipts.models import Label

    def lab(i, label, status, current=True):
        return Label(
            id=i,
            receipt_pk=1,
            word_pk=1,
            line_id=1,
            word_id=1,
            label_type=label,
            status=status,
            proposed_by="t",
            created_at=datetime.now(UTC),
            current=current,
        )

    assert effective_label([]) == ("NONE", "NONE")
    assert effective_label([lab(1, "TAX", "VALID", current=False), lab(2, "TAX", "INVALID")]) == (
        "TAX",
        "INVALID",
    )
    assert effective_label([lab(3, "TAX", "INVALID"), lab(4, "SUBTOTAL", "VALID")]) == (
        "SUBTOTAL",
        "VALID",
    )
