"""The documents app's own settings, read from ``CASEWORK_DOCUMENTS__*``.

Kept inside the app until the platform's ``Settings`` grows an app section (as vanpool's);
the variable names are the ones that section would use.
"""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict

from casework.apps.documents.engines import DEFAULT_ENGINE

__all__ = ["DocumentsSettings"]


class DocumentsSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CASEWORK_DOCUMENTS__", extra="ignore")

    ocr_engine: str = DEFAULT_ENGINE
    """Which OCR reads scanned pages and images: ``rapidocr-v6-spaced`` (the default: RapidOCR's
    detection, PP-OCRv6's recognizer, spaces restored from the geometry; the lowest character
    and word error rates on SROIE receipt scans), ``rapidocr-v6`` (the same without the
    spaces from the geometry), ``rapidocr-spaced`` (RapidOCR's own PP-OCRv4 recognizer, spaces
    restored), ``rapidocr``, ``tesseract`` (needs Debian's
    tesseract-ocr: ``bash scripts/ensure-tesseract.sh``) or ``rapidocr-spaced+tesseract-lines``
    (RapidOCR, the seller's name and address lines read again by Tesseract and the more
    plausible reading kept; needs tesseract-ocr too)."""

    ocr_cache: bool = True
    """Keep each page's OCR text under the home folder (``.casework/ocr-cache``), keyed by the
    page's pixels, the engine and its code, so the same scan is read once (``ocr_cache``)."""
