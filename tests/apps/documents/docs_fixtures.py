"""Shared values of the documents tests (imported by name; conftest puts this folder on the path)."""

from __future__ import annotations

import hashlib
import math
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


PHOTO_LINES = [
    "ABC HO TRADING",
    "NO.2&4, JALAN HARMONI 3/2",
    "81100 JOHOR BAHRU JOHOR",
    "09/01/2019 8:01:11 PM",
    "CASH BILL NO: 10321",
    "TOTAL RM 31.00",
]
"""What the photo-like receipt prints (SROIE's receipt of issue #29, words apart)."""


def photo_receipt(path: Any, lines: list[str] = PHOTO_LINES, seed: int = 7) -> list[list[int]]:
    """A receipt as a phone would photograph it: printed in a monospace font on paper, turned
    1.5 degrees, blurred and grainy, saved as a JPEG. Returns each line's box (x1, y1, ...
    x4, y4 before the turn), the shape of a SROIE transcript row."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    font = ImageFont.truetype("DejaVuSansMono.ttf", 30)
    page = Image.new("L", (820, 90 + 56 * len(lines)), 245)
    draw = ImageDraw.Draw(page)
    boxes = []
    for i, line in enumerate(lines):
        x, y = 60, 45 + 56 * i
        draw.text((x, y), line, fill=25, font=font)
        left, top, right, bottom = draw.textbbox((x, y), line, font=font)
        boxes.append([left, top, right, top, right, bottom, left, bottom])
    page = page.rotate(1.5, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=235)
    page = page.filter(ImageFilter.GaussianBlur(1.1))
    grain = np.random.default_rng(seed).normal(0, 12, (page.height, page.width))
    noisy = np.clip(np.asarray(page, dtype=np.float64) + grain, 0, 255).astype(np.uint8)
    Image.fromarray(noisy).convert("RGB").save(path, "JPEG", quality=70)
    return boxes


EMBED_DIM = 256


def words(texts: list[str]) -> list[list[float]]:
    """A bag-of-words embedder for the memory's tests: words hashed into ``EMBED_DIM``
    buckets, normalised; texts sharing words are similar."""
    out = []
    for text in texts:
        v = [0.0] * EMBED_DIM
        for w in text.lower().split():
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % EMBED_DIM] += 1.0
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        out.append([x / n for x in v])
    return out
