"""Documents in, text out: PDF text layers with pypdf, scanned pages and images through OCR.

``OcrProvider`` is the seam where a hosted OCR service plugs in: anything with a ``name`` and
``read(image) -> str``. The default, ``RapidOcrProvider``, runs rapidocr-onnxruntime, whose wheel
ships its models (offline). Bad input raises one sentence (``InputError``) before anything is
stored; work on long PDFs is bounded and reports progress per page.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PIL import Image, UnidentifiedImageError

from casework.errors import ConfigError, InputError

__all__ = [
    "MAX_BYTES",
    "MAX_OCR_PAGES",
    "MAX_PAGES",
    "MIN_TEXT_LAYER_CHARS",
    "OcrProvider",
    "PageText",
    "RapidOcrProvider",
    "ReadResult",
    "media_type_of",
    "read_document",
    "read_path",
]

MAX_BYTES = 50 * 1024 * 1024
MAX_PAGES = 500
"""Longer PDFs are refused: split them."""
MAX_OCR_PAGES = 60
"""Scanned pages OCR'd per document; OCR costs seconds per page on a laptop CPU."""
MIN_TEXT_LAYER_CHARS = 20
"""A PDF page with less text than this in its text layer is treated as scanned."""
LINE_TOLERANCE = 0.6
"""Boxes whose vertical centres differ by less than this share of their height share a line."""

Progress = Callable[[int, int], None]


class OcrProvider(Protocol):
    """Turns one page image into text (lines in reading order, separated by newlines)."""

    name: str

    def read(self, image: Image.Image) -> str: ...


class RapidOcrProvider:
    """rapidocr-onnxruntime (models inside the wheel); the engine loads once per process."""

    name = "rapidocr"
    _engine: Any = None
    _lock = threading.Lock()

    def _get(self) -> Any:
        with self._lock:
            if RapidOcrProvider._engine is None:
                try:
                    from rapidocr_onnxruntime import RapidOCR  # type: ignore[import-untyped]
                except ImportError as exc:  # pragma: no cover - a dependency of the project
                    raise ConfigError(
                        "OCR needs rapidocr-onnxruntime: pip install rapidocr-onnxruntime."
                    ) from exc
                RapidOcrProvider._engine = RapidOCR()
            return RapidOcrProvider._engine

    def read(self, image: Image.Image) -> str:
        import numpy as np

        boxes, _ = self._get()(np.array(image.convert("RGB")))
        return boxes_to_text(boxes or [])


def boxes_to_text(boxes: list[Any]) -> str:
    """OCR boxes ``[quad, text, score]`` -> lines top to bottom, words left to right."""
    items = []
    for quad, text, _score in boxes:
        ys = [p[1] for p in quad]
        xs = [p[0] for p in quad]
        items.append(((min(ys) + max(ys)) / 2, max(max(ys) - min(ys), 1.0), min(xs), text))
    items.sort(key=lambda i: (i[0], i[2]))
    lines: list[list[tuple[float, float, float, str]]] = []
    for item in items:
        if lines:
            last = lines[-1]
            ref_y = sum(i[0] for i in last) / len(last)
            if abs(item[0] - ref_y) < LINE_TOLERANCE * item[1]:
                last.append(item)
                continue
        lines.append([item])
    return "\n".join(" ".join(i[3] for i in sorted(line, key=lambda i: i[2])) for line in lines)


@dataclass(frozen=True)
class PageText:
    text: str
    ocr: bool
    """True when the text came from OCR rather than a text layer."""
    seconds: float


@dataclass(frozen=True)
class ReadResult:
    media_type: str
    pages: list[PageText]
    engine: str

    @property
    def raw_text(self) -> str:
        return "\n\n".join(p.text for p in self.pages)

    @property
    def ocr_pages(self) -> int:
        return sum(p.ocr for p in self.pages)

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.pages)

    @property
    def ocr_seconds_per_page(self) -> float | None:
        ocr = [p.seconds for p in self.pages if p.ocr]
        return sum(ocr) / len(ocr) if ocr else None


_MAGIC = {
    b"%PDF-": "application/pdf",
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
}


def media_type_of(data: bytes, name: str) -> str:
    """The type from the file's first bytes (never trusting the name); one sentence otherwise."""
    if not data:
        raise InputError(f"{name} is empty (0 bytes); add a PDF, PNG or JPEG file.")
    for magic, media_type in _MAGIC.items():
        if data.startswith(magic):
            return media_type
    raise InputError(f"{name} is not a PDF, PNG or JPEG file; those are the types documents reads.")


def read_document(
    data: bytes,
    name: str,
    *,
    provider: OcrProvider | None = None,
    progress: Progress | None = None,
) -> ReadResult:
    """Text of every page of a PDF or image, or ``InputError`` with one sentence."""
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is larger than {MAX_BYTES // (1024 * 1024)} MB; split it.")
    media_type = media_type_of(data, name)
    provider = provider or RapidOcrProvider()
    if media_type == "application/pdf":
        return _read_pdf(data, name, provider, progress)
    image = _open_image(data, name)
    started = time.perf_counter()
    text = provider.read(image)
    page = PageText(text=text, ocr=True, seconds=time.perf_counter() - started)
    if progress:
        progress(1, 1)
    if not text.strip():
        raise InputError(f"{name} has no readable text (OCR found none); is the image blank?")
    return ReadResult(media_type=media_type, pages=[page], engine=provider.name)


def _open_image(data: bytes, name: str) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise InputError(
            f"{name} is not a readable image ({exc}); re-export it as PNG or JPEG."
        ) from None
    if image.width < 8 or image.height < 8:
        raise InputError(f"{name} is {image.width}x{image.height} pixels, too small to hold text.")
    return image


def _read_pdf(
    data: bytes, name: str, provider: OcrProvider, progress: Progress | None
) -> ReadResult:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InputError(f"{name} is encrypted; save an unprotected copy and add that.")
        total = len(reader.pages)
    except InputError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise InputError(
            f"{name} is not a readable PDF ({exc}); re-export it and add it again."
        ) from None
    if total == 0:
        raise InputError(f"{name} has no pages.")
    if total > MAX_PAGES:
        raise InputError(
            f"{name} has {total} pages; documents reads at most {MAX_PAGES}, so split it."
        )
    pages: list[PageText] = []
    ocr_count = 0
    for index, page in enumerate(reader.pages):
        started = time.perf_counter()
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # pypdf raises many types on damaged content streams
            raise InputError(
                f"{name} page {index + 1} cannot be read ({type(exc).__name__}); re-export the PDF."
            ) from None
        ocr = False
        if len(text.strip()) < MIN_TEXT_LAYER_CHARS:
            images = _page_images(page)
            if images:
                ocr_count += 1
                if ocr_count > MAX_OCR_PAGES:
                    raise InputError(
                        f"{name} has more than {MAX_OCR_PAGES} scanned pages to OCR; split it."
                    )
                text = "\n".join(t for t in (provider.read(img) for img in images) if t)
                ocr = True
        pages.append(PageText(text=text.strip(), ocr=ocr, seconds=time.perf_counter() - started))
        if progress:
            progress(index + 1, total)
    if not any(p.text for p in pages):
        raise InputError(f"{name} has no text layer and no readable scanned text.")
    engine = (
        "pypdf"
        if ocr_count == 0
        else ("pypdf+" + provider.name if ocr_count < total else provider.name)
    )
    return ReadResult(media_type="application/pdf", pages=pages, engine=engine)


def _page_images(page: Any) -> list[Image.Image]:
    out = []
    try:
        for img in page.images:
            try:
                out.append(img.image if img.image is not None else Image.open(io.BytesIO(img.data)))
            except Exception:  # an image format Pillow cannot decode: skip it, not the page
                continue
    except Exception:
        return []
    return out


def read_path(path: Path, **kwargs: Any) -> ReadResult:
    """``read_document`` on a file; a missing file is one sentence too."""
    if not path.is_file():
        raise InputError(f"No file {str(path)!r}; check the path.")
    return read_document(path.read_bytes(), path.name, **kwargs)
