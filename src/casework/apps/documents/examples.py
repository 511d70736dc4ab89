"""What a documents example is (``AppSpec.examples``): a document's text, which is also the
key it is found by, and the fields a person verified for it.

The inputs give the text (``{"text": ..., "fields": [...]}``: what a review decision keeps) or
a file (``{"file": "scan.jpg"}``: the evaluation's JSONL, read through the same OCR as
``documents add``, once per file and process). The key text is the document's non-empty
lines: the embedding sees its first 256 word pieces (the header naming the vendor), and the
memory layer finds each verified value's anchor in the whole of it (``memory.py``). The answer
is ``{"fields": {name: value}}``, from ``expected.gold`` (the evaluation's form) or
``expected.fields``; a null gold value ("not in the document") is left out.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["EXAMPLES", "KEY_CHARS", "DocumentExamples", "document_key"]

KEY_CHARS = 19_000
"""A longer text is cut (the memory refuses keys over 20,000 characters)."""


def document_key(text: str) -> str:
    """A document's key text: its non-empty lines, stripped, cut at ``KEY_CHARS``."""
    return "\n".join(ln.strip() for ln in text.splitlines() if ln.strip())[:KEY_CHARS]


@lru_cache(maxsize=256)
def _file_text(path: str, size: int, mtime: float) -> str:
    from casework.apps.documents.ocr import read_path
    from casework.apps.documents.ocr_cache import configured_ocr
    from casework.config import get_settings

    provider = configured_ocr(None, get_settings().home)
    return read_path(Path(path), provider=provider).raw_text


class DocumentExamples:
    def key_text(self, inputs: dict[str, Any]) -> str:
        text = inputs.get("text")
        if text is None and isinstance(inputs.get("file"), str):
            path = Path(inputs["file"])
            if not path.is_file():
                raise ValueError(f"there is no file {inputs['file']!r} to read")
            stat = path.stat()
            text = _file_text(str(path.resolve()), stat.st_size, stat.st_mtime)
        if not isinstance(text, str) or not document_key(text):
            raise ValueError(
                "a documents example is a document: inputs need its 'text' (or a 'file' to read)"
            )
        return document_key(text)

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        given = expected.get("gold", expected.get("fields"))
        if not isinstance(given, dict):
            raise ValueError("expected.gold must be an object of field name -> verified value")
        fields = {
            str(name).strip(): str(value).strip()
            for name, value in given.items()
            if value is not None and str(value).strip() and str(name).strip()
        }
        if not fields:
            raise ValueError("expected.gold names no field with a verified value")
        return {"fields": fields}


EXAMPLES = DocumentExamples()
