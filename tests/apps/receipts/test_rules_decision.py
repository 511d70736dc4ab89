"""decide_by_rules: the rules-only decision, from a word and its line, without a store or a model."""

from __future__ import annotations

import pytest

from casework.apps.receipts.rules import RULES_SOURCE, WordFacts, decide_by_rules


def facts(
    label: str,
    text: str,
    line: str,
    *,
    section: str = "items",
    amounts: int = 1,
    rightmost: bool = True,
) -> WordFacts:
    return WordFacts(
        label=label,
        text=text,
        line_text=line,
        section=section,
        amounts_on_line=amounts,
        rightmost_amount=rightmost,
        ref="costco#1 line 42 word 3",
    )


def test_the_line_keyword_makes_a_total_valid():
    d = decide_by_rules(facts("GRAND_TOTAL", "303.83", "**** TOTAL 303.83", section="totals"))
    assert (d.verdict, d.confidence) == ("VALID", 70.0)
    assert d.reasoning == "GRAND_TOTAL fits: the line makes this amount GRAND_TOTAL."
    assert [(e.source, e.ref, e.fields["amount_role"]) for e in d.evidence] == [
        (RULES_SOURCE, "costco#1 line 42 word 3", "GRAND_TOTAL")
    ]


def test_a_subtotal_suggested_on_the_total_line_is_invalid():
    d = decide_by_rules(facts("SUBTOTAL", "303.83", "**** TOTAL 303.83", section="totals"))
    assert (d.verdict, d.confidence) == ("INVALID", 80.0)
    assert "the line makes this amount GRAND_TOTAL, not SUBTOTAL" in d.reasoning


def test_two_conflicts_raise_the_confidence():
    # An amount can't be a DATE (shape) and a payment word on the line (tender) conflicts too.
    d = decide_by_rules(facts("DATE", "VISA", "VISA 39.33", section="footer"))
    assert d.verdict == "INVALID" and d.confidence == 80.0
    d2 = decide_by_rules(facts("QUANTITY", "3.5%", "Guests 3.5%", section="header"))
    assert d2.verdict == "INVALID" and d2.confidence == 90.0 and len(d2.evidence) == 3


def test_a_silent_rule_layer_needs_review():
    d = decide_by_rules(facts("PRODUCT_NAME", "LYSOL", "LYSOL WIPES 12.99", amounts=1))
    assert (d.verdict, d.confidence, d.evidence) == ("NEEDS_REVIEW", 50.0, [])
    assert "No rule settles whether 'LYSOL' is PRODUCT_NAME" in d.reasoning


@pytest.mark.parametrize(
    ("line", "loyalty", "payment"),
    [
        ("Target Circle ****5521", "VALID", "INVALID"),
        ("VISA CARD ****5521", "INVALID", "VALID"),
        # The program's own name is not a keyword the rules know: they stay silent.
        ("myWalgreens ****5521", "NEEDS_REVIEW", "NEEDS_REVIEW"),
    ],
)
def test_masked_numbers_follow_the_line(line, loyalty, payment):
    def verdict(label: str) -> str:
        return decide_by_rules(facts(label, "****5521", line, section="footer", amounts=0)).verdict

    assert (verdict("LOYALTY_ID"), verdict("PAYMENT_METHOD")) == (loyalty, payment)


@pytest.mark.parametrize(
    ("label", "text", "line", "amounts", "rightmost", "verdict"),
    [
        ("UNIT_PRICE", "2.49", "2 @ 2.49 4.98", 2, False, "VALID"),
        ("LINE_TOTAL", "4.98", "BANANAS 2.49 4.98", 2, True, "VALID"),
        # A known weakness pinned: with '@' on the line the rightmost amount reads as a price.
        ("LINE_TOTAL", "4.98", "2 @ 2.49 4.98", 2, True, "INVALID"),
        ("LINE_TOTAL", "2.49", "2 @ 2.49 4.98", 2, False, "INVALID"),
        ("TAX", "9.5%", "SALES TAX A=9.5% 1.20", 2, False, "INVALID"),
        ("CHANGE", "0.00", "CHANGE 0.00", 1, True, "VALID"),
    ],
)
def test_amount_roles(label, text, line, amounts, rightmost, verdict):
    d = decide_by_rules(facts(label, text, line, amounts=amounts, rightmost=rightmost))
    assert d.verdict == verdict, d.reasoning
