"""One deps object per run: the repository, the OCR provider, settings and the model source."""

from __future__ import annotations

from dataclasses import dataclass, field

from casework.apps.documents.ocr import OcrProvider, RapidOcrProvider
from casework.apps.documents.repository import DocumentsRepository
from casework.config import Settings, get_settings
from casework.runtime.strategy import ModelSource
from casework.stores.sql import get_engine, migrate

__all__ = ["DocumentsDeps", "build_deps", "default_models"]


def default_models(settings: Settings) -> ModelSource:
    def models(role: str):
        from casework.llm import resolve_model

        return resolve_model(settings.models.for_role(role), settings=settings)

    return models


@dataclass(frozen=True)
class DocumentsDeps:
    repo: DocumentsRepository
    settings: Settings
    models: ModelSource
    """``models(role)`` -> chat model; the extraction agent asks for ``specialist``."""
    ocr: OcrProvider = field(default_factory=RapidOcrProvider)


def build_deps(
    settings: Settings | None = None,
    *,
    db_url: str | None = None,
    models: ModelSource | None = None,
    ocr: OcrProvider | None = None,
    run_migrations: bool = True,
) -> DocumentsDeps:
    """Deps on the configured database (migrated on first use)."""
    settings = settings or get_settings()
    engine = get_engine(db_url or settings.db_url)
    if run_migrations:
        migrate(engine)
    deps = DocumentsDeps(
        repo=DocumentsRepository(engine),
        settings=settings,
        models=models or default_models(settings),
        ocr=ocr or RapidOcrProvider(),
    )
    from casework.apps.documents.service import recover_stale_runs

    recover_stale_runs(deps)  # a killed process must not leave an extraction in_progress
    return deps
