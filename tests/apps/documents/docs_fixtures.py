"""Shared values of the documents tests (imported by name; conftest puts this folder on the path)."""

from __future__ import annotations

from casework.apps.documents.ocr import PageText, ReadResult

ALICE, BOB = 1, 2

INVOICE_TEXT = """ACME SUPPLIES LTD
12 Harbour Road, Leeds LS1 4AB
INVOICE No. INV-1043
Date: 12/03/2024
Bill to: Northwind Traders
Widgets x 3   30.00
Bolts x 10    12.50
Subtotal 42.50
VAT 2.60
Total: £45.10"""


class FakeOcr:
    """Reads the text an image was rendered from (tests never pay for real OCR)."""

    name = "fake-ocr"

    def __init__(self, text: str = INVOICE_TEXT) -> None:
        self.text = text

    def read(self, image) -> str:
        return self.text


def text_read(text: str, pages: int = 1) -> ReadResult:
    return ReadResult(
        media_type="application/pdf",
        pages=[PageText(text=text, ocr=False, seconds=0.0) for _ in range(pages)],
        engine="pypdf",
    )
