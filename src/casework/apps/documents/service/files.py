"""Files in: one read and stored, many through the batch seam, or a file's text read without
storing it; and the OCR engines a read may use."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.engines import ENGINES
from casework.apps.documents.intake import AddedFile, PageProgress, ReadTask, failed_file
from casework.apps.documents.models import DocumentInfo
from casework.apps.documents.ocr import OcrProvider, ReadResult, read_path
from casework.apps.documents.ocr_cache import configured_ocr, for_owner
from casework.config import get_settings
from casework.errors import InputError
from casework.runtime.batch import BatchConfig, BatchResult, run_batch

__all__ = ["ENGINE_NAMES", "add_file", "add_files", "ocr_engine", "read_file"]


def add_file(
    deps: DocumentsDeps,
    user_id: int,
    path: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> DocumentInfo:
    """Read one file (text layer, or OCR page by page), then store it and its text in one
    transaction: a file that cannot be read stores nothing (one sentence why)."""
    read = read_path(path, provider=for_owner(deps.ocr, user_id), progress=progress)
    return deps.repo.add_document(user_id, filename=path.name, data=path.read_bytes(), read=read)


ENGINE_NAMES = tuple(ENGINES)
"""The OCR engines ``CASEWORK_DOCUMENTS__OCR_ENGINE`` may name, the default first."""


def ocr_engine(
    name: str | None = None, *, home: Path | None = None, cached: bool = True
) -> OcrProvider:
    """The OCR engine of that name, else the one the settings name
    (``CASEWORK_DOCUMENTS__OCR_ENGINE``), its readings kept under ``home`` (the settings'
    home by default; ``ocr_cache``) unless ``cached`` is off; unknown or not installed is one
    sentence."""
    return configured_ocr(name, home or get_settings().home, cached=cached)


def read_file(
    path: Path,
    *,
    engine: str | None = None,
    cached: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> ReadResult:
    """The text a file yields, page by page, as an extraction would see it; nothing is stored
    (``documents ocr FILE``: what the rules and the model read). ``cached=False`` reads every
    page afresh (``bench ocr`` times the engines)."""
    return read_path(path, provider=ocr_engine(engine, cached=cached), progress=progress)


def add_files(
    deps: DocumentsDeps,
    user_id: int,
    paths: list[Path],
    *,
    batch: BatchConfig | None = None,
    progress: PageProgress | None = None,
) -> list[AddedFile]:
    """Every file read through the platform's batch seam (``run_batch``: worker threads here,
    or a Ray cluster), then stored here in the order given, each file with its text in one
    transaction as soon as the files before it are done: a bad file is one sentence in its
    result, the others are still added, and document ids follow the command line.
    ``progress(name, pages_done, pages)`` follows each file's pages (local executor only);
    ``batch.progress`` is called as each file is read."""
    if not paths:
        raise InputError("Name at least one PDF, PNG or JPEG file.")
    config = dataclasses.replace(batch or BatchConfig())
    added: list[AddedFile] = []
    finished: dict[int, BatchResult[ReadResult]] = {}
    outer = config.progress

    def store(r: BatchResult[ReadResult]) -> AddedFile:
        path = paths[r.index]
        if r.error is not None or r.value is None:
            return failed_file(path, r.error or RuntimeError("no result"))
        try:
            doc = deps.repo.add_document(
                user_id, filename=path.name, data=path.read_bytes(), read=r.value
            )
        except Exception as exc:
            return failed_file(path, exc)
        return AddedFile(path, doc, None)

    def read_one(r: BatchResult[Any]) -> None:
        finished[r.index] = r
        while len(added) in finished:
            added.append(store(finished.pop(len(added))))
        if outer is not None:
            outer(r)

    config.progress = read_one
    run_batch(paths, ReadTask(for_owner(deps.ocr, user_id), progress), config)
    return added
