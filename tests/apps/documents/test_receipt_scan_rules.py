"""The field rules on receipts as OCR reads them: each case is a development receipt's reading
(SROIE's second and third held-out sets, development since) shortened to the lines that
decide the field."""

from __future__ import annotations

import pytest

from casework.apps.documents.extractor import extract


def _field(text: str, name: str) -> object:
    return extract(text, [name])[0][name]


@pytest.mark.parametrize(
    ("text", "total"),
    [
        # a count is not the total, with cents or not, nor before the label
        ("Total Items = 1.00\nSub Total RM 15.00\nRounding Total Incl.6 GST RM 15.00", 15.00),
        ("Total Inclusive of Tax 11.25\nRounding Adjustment 00'0\nItem Total 3", 11.25),
        # a count and the amount on one line: the count is no thousands group
        ("Total Qty: 15 190.80\nRounding : 0.00\nCASH : 190.80", 190.80),
        # the sales of one GST rate are not the amount to pay
        (
            "Total 0% supplies: -9.62\nTotal 6% supplies (Inc. GST): 15.52\nTotal Payal te: 5.90",
            5.90,
        ),
        # the label as OCR reads it: "Tota!", "lnclusive"
        ("Rounding Adj: 0.00\nTota! Inclusive GST: 217.00\nGST Summary: Amount Tax", 217.00),
        (
            "Total Sales (Excluding GST  12.00\nRounding : 0.00\n"
            "Total Sales (lnclusive of GsT) 12.00\nCASH 20.00",
            12.00,
        ),
        # the tax table under the amount paid totals the tax, not the sale
        (
            "Total Qty: 15 190.80\nRounding : 0.00\nTotaySales (Inclusive of GsT) : 190.80\n"
            "GST SUMMARY\nTax Code % Amt(RM) Tax(RM)\nTotal : 180.00 10.80",
            190.80,
        ),
        (
            "Total Sales 12.00\nRounding : 0.00\nTax Code % Amt(RM) Tax (RM)\nTotal: 12.00 0.00",
            12.00,
        ),
        # a till that prints no total: its net amount, as a subtotal
        ("Cashier : ash\nGross Amt : 36.00\nNet Amt : 36.00\nReceived 36.00", 36.00),
    ],
)
def test_receipt_totals_as_ocr_reads_them(text: str, total: float | None) -> None:
    assert _field(text, "total") == total


def test_a_summary_total_is_kept_when_the_page_has_no_other() -> None:
    assert _field("GST Summary\nTotal : 12.00", "total") == 12.00
