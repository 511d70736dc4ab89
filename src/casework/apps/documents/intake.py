"""Reading a batch of files into text (the slow part: OCR), one result per file: the
document, or the one sentence why not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.apps.documents.models import (
    DocumentInfo,
)
from casework.apps.documents.ocr import (
    OcrProvider,
    ReadResult,
    read_path,
)
from casework.errors import CaseworkError

PageProgress = Callable[[str, int, int], None]
"""``progress(file name, pages read, pages)``."""


@dataclass(frozen=True)
class AddedFile:
    """What adding one file of a batch gave: the document, or the sentence why not."""

    path: Path
    document: DocumentInfo | None
    error: str | None
    exit_code: int = 0
    """The error's exit code (2 for a file the user can fix, 1 for anything else)."""


class ReadTask:
    """``task(path)`` reads one file into text (the slow part: OCR). It holds only the OCR
    provider, so it crosses to a Ray worker as is; the worker needs the file at the same path
    (a local Ray, or a folder every machine mounts) and never a database."""

    def __init__(self, ocr: OcrProvider, progress: PageProgress | None = None) -> None:
        self.ocr = ocr
        self.progress = progress

    def __getstate__(self) -> dict[str, Any]:
        return {"ocr": self.ocr, "progress": None}  # page progress stays in this process

    def __call__(self, path: Path) -> ReadResult:
        pages = self.progress
        return read_path(
            path,
            provider=self.ocr,
            progress=(lambda done, total: pages(path.name, done, total)) if pages else None,
        )


def failed_file(path: Path, error: BaseException) -> AddedFile:
    if isinstance(error, CaseworkError):
        return AddedFile(path, None, str(error), error.exit_code)
    # a bug or a broken file the reader did not foresee: still one line, not a crash
    return AddedFile(path, None, f"{path.name}: {type(error).__name__}: {error}", 1)
