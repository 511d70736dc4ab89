"""Files a live run's form uploads: saved under the home's ``uploads/`` folder, one fresh
folder per run, under their own (cleaned) names; the provider gets their paths."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile

from casework.apikit import safe_upload_name
from casework.errors import InputError
from casework.runtime.review_provider import RunField

__all__ = ["discard", "run_params"]


async def run_params(fields: list[RunField], form: Any, home: Path) -> dict[str, str]:
    """The run's params from a submitted form: text fields stripped, each uploaded file saved
    and named by its path (``""`` for an optional file left out). ``InputError`` for a required
    file missing or empty, before anything is saved."""
    params: dict[str, str] = {}
    uploads: dict[str, tuple[str, bytes]] = {}
    for f in fields:
        value = form.get(f.name)
        if f.kind != "file":
            params[f.name] = str(value or "").strip()
            continue
        data = await value.read() if isinstance(value, UploadFile) and value.filename else b""
        if not data:
            if not f.optional:
                raise InputError(f"Choose a file for the field {f.label}; this run needs it.")
            params[f.name] = ""
            continue
        uploads[f.name] = (safe_upload_name(value.filename), data)
    if uploads:
        folder = home / "uploads" / secrets.token_hex(8)
        folder.mkdir(parents=True, mode=0o700)
        for name, (filename, data) in uploads.items():
            path = folder / filename
            if path.exists():  # two fields, one file name
                path = folder / f"{name}-{filename}"
            path.write_bytes(data)
            params[name] = str(path)
    return params


def discard(fields: list[RunField], params: dict[str, str]) -> None:
    """Remove the files a run that did not start was given (and their folder)."""
    for f in fields:
        if f.kind == "file" and params.get(f.name):
            path = Path(params[f.name])
            path.unlink(missing_ok=True)
            if path.parent.is_dir() and not any(path.parent.iterdir()):
                path.parent.rmdir()
