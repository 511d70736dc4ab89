"""Reading files: text layers, OCR seam, bad input as one sentence, bounded long PDFs."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import pytest
from docs_fixtures import ALICE, FakeOcr
from PIL import Image

from casework.apps.documents import ocr
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.engines import DEFAULT_ENGINE, ocr_provider
from casework.apps.documents.service import add_files
from casework.errors import InputError
from casework.runtime.batch import BatchConfig

DATA = Path(ocr.__file__).parent / "data" / "eval" / "files"


def _blank_pdf(pages: int) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_text_layer_pdf_reads_every_page() -> None:
    seen: list[tuple[int, int]] = []
    read = ocr.read_document(
        (DATA / "letter-37.pdf").read_bytes(),
        "letter-37.pdf",
        provider=FakeOcr(),
        progress=lambda d, t: seen.append((d, t)),
    )
    assert read.engine == "pypdf" and len(read.pages) == 3 and read.ocr_pages == 0
    assert "Dear" in read.pages[0].text and read.pages[2].text.startswith("letter-37 page 3")
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_scanned_pdf_goes_through_the_ocr_seam() -> None:
    fake = FakeOcr("TOTAL 12.00")
    read = ocr.read_document((DATA / "invoice-43.pdf").read_bytes(), "scan.pdf", provider=fake)
    assert read.engine == "fake-ocr" and read.ocr_pages == 1 and read.raw_text == "TOTAL 12.00"


def test_image_goes_through_the_ocr_seam() -> None:
    read = ocr.read_document(
        (DATA / "receipt-38.png").read_bytes(), "r.png", provider=FakeOcr("hello")
    )
    assert read.media_type == "image/png" and read.raw_text == "hello"


def test_boxes_to_text_orders_lines_and_words() -> None:
    boxes = [
        [[[300, 80], [400, 80], [400, 100], [300, 100]], "45.10", 0.9],
        [[[20, 20], [200, 20], [200, 44], [20, 44]], "ACME LTD", 0.9],
        [[[20, 82], [120, 82], [120, 102], [20, 102]], "Total:", 0.9],
    ]
    assert ocr.boxes_to_text(boxes) == "ACME LTD\nTotal: 45.10"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "x.pdf is empty (0 bytes); add a PDF, PNG or JPEG file."),
        (b"hello", "x.pdf is not a PDF, PNG or JPEG file; those are the types documents reads."),
        (b"%PDF-1.4 broken", "x.pdf is not a readable PDF"),
        (b"\x89PNG\r\n\x1a\nnot really", "x.pdf is not a readable image"),
    ],
)
def test_bad_input_is_one_sentence(data: bytes, message: str) -> None:
    with pytest.raises(InputError) as err:
        ocr.read_document(data, "x.pdf", provider=FakeOcr())
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_blank_image_says_so() -> None:
    buf = io.BytesIO()
    Image.new("RGB", (300, 200), "white").save(buf, "PNG")
    with pytest.raises(InputError, match="has no readable text"):
        ocr.read_document(buf.getvalue(), "blank.png", provider=FakeOcr(""))
    tiny = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(tiny, "PNG")
    with pytest.raises(InputError, match="4x4 pixels, too small"):
        ocr.read_document(tiny.getvalue(), "tiny.png", provider=FakeOcr())


def test_a_200_page_pdf_is_bounded_and_reports_progress() -> None:
    data = _blank_pdf(200)
    seen: list[int] = []
    with pytest.raises(InputError, match="has no text layer and no readable scanned text"):
        ocr.read_document(
            data, "long.pdf", provider=FakeOcr(), progress=lambda d, t: seen.append(d)
        )
    assert seen[-1] == 200 and len(seen) == 200
    with pytest.raises(InputError, match="has 501 pages; documents reads at most 500, so split it"):
        ocr.read_document(_blank_pdf(501), "huge.pdf", provider=FakeOcr())


def test_a_bad_file_is_one_sentence_and_the_others_are_still_added(
    deps: DocumentsDeps, tmp_path: Path
) -> None:
    bad = tmp_path / "empty.pdf"
    bad.write_bytes(b"")
    files = [DATA / "invoice-01.pdf", bad, tmp_path / "missing.png", DATA / "form-22.pdf"]
    added = add_files(deps, ALICE, files, batch=BatchConfig(concurrency=2))
    assert [(a.path.name, a.error, a.exit_code) for a in added] == [
        ("invoice-01.pdf", None, 0),
        ("empty.pdf", "empty.pdf is empty (0 bytes); add a PDF, PNG or JPEG file.", 2),
        ("missing.png", f"No file {str(tmp_path / 'missing.png')!r}; check the path.", 2),
        ("form-22.pdf", None, 0),
    ]
    # the bad files stored nothing; the good ones are whole (document and its text)
    stored = deps.repo.list_documents(ALICE)
    assert sorted(d.filename for d in stored) == ["form-22.pdf", "invoice-01.pdf"]
    text = deps.repo.document_text(ALICE, added[0].document.id)
    assert text is not None and "INV-3620" in text[0]


def test_a_bug_in_one_file_does_not_stop_the_batch(
    deps: DocumentsDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ocr.read_document

    def broken(data: bytes, name: str, **kwargs):
        if name == "form-22.pdf":
            raise ValueError("boom")
        return real(data, name, **kwargs)

    monkeypatch.setattr(ocr, "read_document", broken)
    added = add_files(deps, ALICE, [DATA / "form-22.pdf", DATA / "invoice-01.pdf"])
    assert [(a.error, a.exit_code) for a in added] == [
        ("form-22.pdf: ValueError: boom", 1),
        (None, 0),
    ]
    assert [d.filename for d in deps.repo.list_documents(ALICE)] == ["invoice-01.pdf"]


@pytest.mark.slow
def test_real_ocr_reads_a_scanned_receipt() -> None:
    read = ocr.read_document(
        (DATA / "receipt-38.png").read_bytes(),
        "receipt-38.png",
        provider=ocr_provider(DEFAULT_ENGINE),
    )
    assert read.engine == "rapidocr-v6-spaced"
    assert "Cable ties 11.98" in read.raw_text and "Sourdough loaf 16.70" in read.raw_text
    assert "85.62" in read.raw_text
    assert read.ocr_seconds_per_page is not None and read.ocr_seconds_per_page < 60


def test_the_read_task_crosses_to_a_worker_without_deps(deps: DocumentsDeps) -> None:
    """What a Ray worker gets: the OCR provider only (no store, no page callback), and it
    reads on its own there."""
    from casework.apps.documents.intake import ReadTask

    seen: list[tuple[str, int, int]] = []
    task = ReadTask(deps.ocr, lambda name, done, total: seen.append((name, done, total)))
    shipped = pickle.loads(pickle.dumps(task))
    assert set(vars(shipped)) == {"ocr", "progress"} and shipped.progress is None
    read = shipped(DATA / "letter-37.pdf")
    assert (len(read.pages), read.engine) == (3, "pypdf") and seen == []


def test_full_width_punctuation_from_the_recognizer_is_read_as_ascii() -> None:
    assert ocr.tidy_text("MR. D.I.Y.（KUCHAI) SDN BHD") == "MR. D.I.Y.(KUCHAI) SDN BHD"
    assert ocr.tidy_text("Cashier ： EIRA") == "Cashier : EIRA"
    assert ocr.tidy_text("Simpang Off Batu Village、") == "Simpang Off Batu Village,"
    box = [[[0, 0], [90, 0], [90, 10], [0, 10]], "（GST ID N0 :000473792512)", 0.9]
    assert ocr.boxes_to_text([box]) == "(GST ID N0 :000473792512)"


def test_half_a_surrogate_pair_in_a_text_layer_is_stored_as_a_question_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pypdf reads some Factur-X samples' emoji as a lone high surrogate ("\ud83d"), which a
    # UTF-8 store refuses; the page is kept with "?" for it
    from pypdf import PageObject

    monkeypatch.setattr(
        PageObject, "extract_text", lambda self, *a, **k: "Facture \ud83d FR-2024-001 total 12,00"
    )
    read = ocr.read_document(_blank_pdf(1), "facture.pdf", provider=FakeOcr())
    assert read.pages[0].text == "Facture ? FR-2024-001 total 12,00"
    read.pages[0].text.encode("utf-8")
