"""Shared values of the documents tests (imported by name; conftest puts this folder on the path)."""

from __future__ import annotations

from typing import Any

from casework.apps.documents.ocr import PageText, ReadResult
from casework.llm import RoleModels
from casework.runtime import RunConfig

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


def on(model: Any, **fields: Any) -> RunConfig:
    """A run config on ``model`` for every role (``fields``: the config's others)."""
    return RunConfig(models=RoleModels.given(model), **fields)


def no_models() -> RoleModels:
    """Models whose every call fails the test (a run that must not ask for one)."""

    def refuse(role: str) -> Any:
        raise AssertionError(f"this test must not ask for a model ({role})")

    return RoleModels.given(refuse)
