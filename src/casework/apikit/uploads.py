"""The one way to name an uploaded file on disk."""

from __future__ import annotations

from casework.errors import (
    InputError,
)

MAX_NAME_BYTES = 255
"""A file name's limit on common file systems (ext4, APFS, NTFS), in UTF-8 bytes."""
MAX_SUFFIX_BYTES = 16


def safe_upload_name(filename: str | None) -> str:
    """The name to store an uploaded file under: its base name (any folders a client put in
    it dropped, ``/`` or ``\\``), without control characters, cut to 255 bytes keeping the
    extension. InputError (422) when nothing nameable is left (empty, ``.``, ``..``)."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    if base in ("", ".", ".."):
        raise InputError(
            "The uploaded file's name is empty, '.', '..' or ends in a folder separator; "
            "send the file under its own name, such as 'receipt.pdf'."
        )
    data = base.encode()
    if len(data) <= MAX_NAME_BYTES:
        return base
    stem, dot, suffix = base.rpartition(".")
    keeps_suffix = bool(stem) and len(suffix.encode()) < MAX_SUFFIX_BYTES
    tail = (dot + suffix).encode() if keeps_suffix else b""
    head = (stem.encode() if keeps_suffix else data)[: MAX_NAME_BYTES - len(tail)]
    # A cut through a multi-byte character drops that character's first bytes too.
    return head.decode(errors="ignore") + tail.decode()
