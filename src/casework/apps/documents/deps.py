"""One deps object per run: the repository, the OCR provider, settings and the model source.
``service.build_deps`` opens one (it also closes runs a dead process left open)."""

from __future__ import annotations

from dataclasses import dataclass, field

from casework.apps.documents.ocr import OcrProvider, RapidOcrProvider
from casework.apps.documents.repository import DocumentsRepository
from casework.config import Settings
from casework.llm.roles import RoleModels

__all__ = ["DocumentsDeps"]


@dataclass(frozen=True)
class DocumentsDeps:
    repo: DocumentsRepository
    settings: Settings
    models: RoleModels
    """``models(role)`` -> chat model; the extraction agent asks for ``specialist``."""
    ocr: OcrProvider = field(default_factory=RapidOcrProvider)
