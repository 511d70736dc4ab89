"""The deps every run shares: the repository, the OCR provider and the settings (a run's
models come in its ``RunConfig``). ``service.build_deps`` opens one (it also closes runs a
dead process left open)."""

from __future__ import annotations

from dataclasses import dataclass, field

from casework.apps.documents.engines import DEFAULT_ENGINE, ocr_provider
from casework.apps.documents.ocr import OcrProvider
from casework.apps.documents.repository import DocumentsRepository
from casework.config import Settings

__all__ = ["DocumentsDeps"]


@dataclass(frozen=True)
class DocumentsDeps:
    repo: DocumentsRepository
    settings: Settings
    ocr: OcrProvider = field(default_factory=lambda: ocr_provider(DEFAULT_ENGINE))
