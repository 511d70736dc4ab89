"""The OCR cache: a page read once is served from disk, keyed by its pixels, the engine and
the reading code; a failed read or an unwritable folder stores nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from casework.apps.documents import ocr_cache
from casework.apps.documents.ocr_cache import CachedOcr
from casework.apps.documents.service import ocr_engine


class CountingOcr:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def read(self, image: Image.Image) -> str:
        self.calls += 1
        return f"TOTAL {image.getpixel((0, 0))}"


def _page(value: int = 255) -> Image.Image:
    return Image.new("L", (40, 20), value)


def test_the_same_page_is_read_once(tmp_path: Path) -> None:
    engine = CountingOcr()
    cached = CachedOcr(engine, tmp_path)
    assert cached.read(_page()) == "TOTAL 255"
    assert cached.read(_page()) == "TOTAL 255"  # a new image object with the same pixels
    assert (engine.calls, cached.hits, cached.misses) == (1, 1, 1)
    # a second process (a new wrapper on the same folder) reads it from disk too
    again = CachedOcr(CountingOcr(), tmp_path)
    assert again.read(_page()) == "TOTAL 255" and again.provider.calls == 0  # type: ignore[attr-defined]


def test_other_pixels_or_another_size_are_read_afresh(tmp_path: Path) -> None:
    engine = CountingOcr()
    cached = CachedOcr(engine, tmp_path)
    cached.read(_page())
    assert cached.read(_page(254)) == "TOTAL 254"
    cached.read(Image.new("L", (20, 40), 255))  # the same bytes, another shape
    assert engine.calls == 3


def test_changed_reading_code_reads_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = CountingOcr()
    CachedOcr(engine, tmp_path).read(_page())
    monkeypatch.setattr(ocr_cache, "reading_fingerprint", lambda: "another-version")
    CachedOcr(engine, tmp_path).read(_page())
    assert engine.calls == 2


def test_a_failed_read_stores_nothing(tmp_path: Path) -> None:
    class Broken:
        name = "broken"

        def read(self, image: Image.Image) -> str:
            raise RuntimeError("model crashed")

    with pytest.raises(RuntimeError):
        CachedOcr(Broken(), tmp_path).read(_page())
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_an_unwritable_folder_only_costs_a_reread(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    engine = CountingOcr()
    cached = CachedOcr(engine, blocker)  # folders cannot be made under a file
    assert cached.read(_page()) == cached.read(_page()) == "TOTAL 255"
    assert engine.calls == 2


def test_the_engines_users_get_are_cached_unless_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DOCUMENTS__OCR_ENGINE", raising=False)
    engine = ocr_engine("rapidocr", home=tmp_path)
    assert isinstance(engine, CachedOcr) and engine.name == "rapidocr"
    assert engine.folder.parent == tmp_path / "ocr-cache" / "rapidocr"
    assert not isinstance(ocr_engine("rapidocr", home=tmp_path, cached=False), CachedOcr)
    monkeypatch.setenv("CASEWORK_DOCUMENTS__OCR_CACHE", "false")
    assert not isinstance(ocr_engine("rapidocr", home=tmp_path), CachedOcr)


def test_the_ocr_command_reads_a_scan_once_unless_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    from typer.testing import CliRunner

    from casework.apps.documents.cli import app

    engine = CountingOcr()
    monkeypatch.setattr(ocr_cache, "ocr_provider", lambda name: engine)
    scan = tmp_path / "scan.png"
    _page(128).save(scan)
    runner = CliRunner()
    for args in (["ocr", str(scan)], ["ocr", str(scan)]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0 and res.stdout == "TOTAL 128\n"
    assert engine.calls == 1
    assert list((settings.home / "ocr-cache" / "counting").rglob("*.txt"))  # under the home
    assert runner.invoke(app, ["ocr", str(scan), "--fresh"]).exit_code == 0
    assert engine.calls == 2


def test_each_owner_has_a_cache_of_their_own(tmp_path: Path) -> None:
    """A page another user added is not served faster to this one: that would tell them
    someone had added that very scan."""
    engine = CountingOcr()
    shared = CachedOcr(engine, tmp_path)
    alice, bob = ocr_cache.for_owner(shared, 1), ocr_cache.for_owner(shared, 2)
    alice.read(_page())
    assert (engine.calls, alice.misses) == (1, 1)
    bob.read(_page())  # bob's first read of the same scan is a real read
    assert (engine.calls, bob.misses, bob.hits) == (2, 1, 0)
    ocr_cache.for_owner(shared, 1).read(_page())  # alice again: from her cache
    assert engine.calls == 2
    assert ocr_cache.for_owner(engine, 1) is engine  # no cache: the engine as it is


def test_documents_added_by_two_users_are_read_for_each(tmp_path: Path, settings, repo) -> None:
    from casework.apps.documents.deps import DocumentsDeps
    from casework.apps.documents.service import add_file, add_files

    engine = CountingOcr()
    deps = DocumentsDeps(repo=repo, settings=settings, ocr=CachedOcr(engine, tmp_path))
    scan = tmp_path / "scan.png"
    _page(77).save(scan)
    add_file(deps, 1, scan)
    add_file(deps, 1, scan)
    assert engine.calls == 1
    assert [a.error for a in add_files(deps, 2, [scan])] == [None]
    assert engine.calls == 2
