"""The OCR engines a user picks by name (``ENGINES``, the ``ocr_engine`` setting), and the one
that reads a receipt's top lines twice (``rapidocr-spaced+tesseract-lines``): each line box of
the seller's block cut out of the page and read again by Tesseract, the more plausible of the
two readings kept (``readings.choose``)."""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from casework.apps.documents.ocr import (
    OcrProvider,
    RapidOcrProvider,
    TesseractProvider,
    boxes_to_text,
    line_groups,
    tidy_text,
)
from casework.errors import ConfigError

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "LINE_HEIGHT",
    "ChosenLinesProvider",
    "line_crop",
    "ocr_provider",
    "tesseract_line",
]

LINE_HEIGHT = 40
"""Tesseract reads a line crop scaled up to at least this many pixels high (SROIE's small
print is 15 to 25 pixels high; Tesseract reads it worse unscaled)."""


def line_crop(gray: Image.Image, quad: list[list[float]]) -> Image.Image:
    """A box's line cut out of the grey page with a margin (4 pixels each side, 15% of its
    height above and below), scaled up to ``LINE_HEIGHT``."""
    xs = [p[0] for p in quad]
    ys = [p[1] for p in quad]
    margin = (max(ys) - min(ys)) * 0.15
    crop = gray.crop(
        (
            int(max(0, min(xs) - 4)),
            int(max(0, min(ys) - margin)),
            int(min(gray.width, max(xs) + 4)),
            int(min(gray.height, max(ys) + margin)),
        )
    )
    if 0 < crop.height < LINE_HEIGHT:
        crop = crop.resize((max(1, round(crop.width * LINE_HEIGHT / crop.height)), LINE_HEIGHT))
    return crop


def tesseract_line(crop: Image.Image) -> list[tuple[str, float]]:
    """Tesseract's words in one line crop (``--psm 7``: a single text line) with its
    confidence in each, 0 to 1."""
    import pytesseract  # type: ignore[import-untyped]

    if crop.width < 4 or crop.height < 4:
        return []
    data = pytesseract.image_to_data(crop, config="--psm 7", output_type=pytesseract.Output.DICT)
    return [
        (word.strip(), max(0.0, float(conf)) / 100)
        for word, conf in zip(data["text"], data["conf"], strict=True)
        if word.strip()
    ]


class ChosenLinesProvider:
    """RapidOCR (spaced) reads the page; the lines of its top block (the seller's name and
    address, up to the first contact, tax or date line: ``readings.head_lines``) are read a
    second time by Tesseract from the same boxes, and each box keeps the more plausible
    reading (``readings.choose``). The two engines misread different letters of a receipt's
    address; Tesseract on a dozen line crops costs far less than on a page."""

    name = "rapidocr-spaced+tesseract-lines"

    def __init__(self) -> None:
        TesseractProvider()  # not installed: one sentence now, not on the first page
        self.rapid = RapidOcrProvider(spaced=True)

    def read(self, image: Image.Image) -> str:
        from casework.apps.documents.readings import choose, head_lines

        boxes = self.rapid.boxes(image)
        lines = line_groups(boxes)
        texts = [" ".join(tidy_text(boxes[i][1]) for i in line) for line in lines]
        gray = image.convert("L")
        for index in head_lines(texts):
            for i in lines[index]:
                quad, text, score = boxes[i]
                second = tesseract_line(line_crop(gray, quad))
                boxes[i] = [quad, choose(tidy_text(text), float(score), second), score]
        return boxes_to_text(boxes)


ENGINES: dict[str, Callable[[], OcrProvider]] = {
    "rapidocr-v6-spaced": lambda: RapidOcrProvider(spaced=True, recognizer="v6"),
    "rapidocr-v6": lambda: RapidOcrProvider(recognizer="v6"),
    "rapidocr-spaced": lambda: RapidOcrProvider(spaced=True),
    "rapidocr": RapidOcrProvider,
    "tesseract": TesseractProvider,
    "rapidocr-spaced+tesseract-lines": ChosenLinesProvider,
}
"""The OCR engines by name, the default first."""
DEFAULT_ENGINE = "rapidocr-v6-spaced"


def ocr_provider(name: str) -> OcrProvider:
    """The engine of that name; an unknown name or a missing engine is one sentence."""
    factory = ENGINES.get(name.strip().lower())
    if factory is None:
        raise ConfigError(
            f"Unknown OCR engine {name!r}; set CASEWORK_DOCUMENTS__OCR_ENGINE to one of "
            f"{', '.join(ENGINES)}."
        )
    return factory()
