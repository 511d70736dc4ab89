"""The labels.json format: parsing, line rebuilding, place derivation, atomic imports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casework.apps.receipts.baseline import baseline_decide
from casework.apps.receipts.importer import parse_file, parse_record
from casework.apps.receipts.labels import resolve_ref
from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.service import (
    bundled_receipt_files,
    import_files,
)
from casework.errors import InputError


def _sample(name: str) -> Path:
    return next(p for p in bundled_receipt_files() if p.name.startswith(name + "."))


def test_lines_are_rebuilt_from_boxes_top_down_left_to_right():
    [r] = parse_file(_sample("costco"))
    texts = [line.text for line in r.lines]
    assert texts[:6] == [
        "COSTCO",
        "WHOLESALE",
        "Westlake Village #117",
        "5700 Lindero Canyon Rd",
        "Westlake Village, CA 91362",
        "(818) 597-3901",
    ]
    assert "** TOTAL 303.83" in texts
    assert r.key == "57cb7f2c-7dcc-4974-9ef8-a460232f3b1d#1" and r.slug == "costco"
    total = next(
        w for w in r.words if w.text == "303.83" and w.line_id == texts.index("** TOTAL 303.83") + 1
    )
    assert (total.word_id, total.label) == (3, "GRAND_TOTAL")


def test_place_is_derived_from_labelled_header():
    [r] = parse_file(_sample("sprouts"))
    assert r.place.address == "1012 WESTLAKE BLVD., WESTLAKE, CA 91361"
    assert r.place.phone == "(805)917-4200"
    assert r.place.website == "sprouts.com"
    assert r.place.hours == "Store Hours MON-SUN 7AM-10PM"


def test_every_bundled_receipt_parses():
    receipts = [rec for p in bundled_receipt_files() for rec in parse_file(p)]
    assert len(receipts) == 12
    assert len({r.key for r in receipts}) == 12
    assert sum(len(r.words) for r in receipts) == 1368


def test_top_origin_boxes_are_detected(tmp_path, write_receipt):
    rows = [
        ("SHOP", "B-MERCHANT_NAME"),
        ("MILK", "B-PRODUCT_NAME"),
        ("2.00", "B-LINE_TOTAL"),
        ("TOTAL", "O"),
        ("2.00", "B-GRAND_TOTAL"),
    ]
    lines = [0, 1, 1, 2, 2]
    up = parse_file(write_receipt(tmp_path / "up.json", rows, lines=lines))[0]
    down = parse_file(write_receipt(tmp_path / "down.json", rows, lines=lines, y_up=False))[0]
    assert (
        [ln.text for ln in up.lines]
        == [ln.text for ln in down.lines]
        == ["SHOP", "MILK 2.00", "TOTAL 2.00"]
    )


def test_missing_key_and_merchant_are_derived(tmp_path, write_receipt):
    rows = [
        ("ACME", "B-MERCHANT_NAME"),
        ("FOODS", "I-MERCHANT_NAME"),
        ("BREAD", "B-PRODUCT_NAME"),
        ("3.50", "B-LINE_TOTAL"),
    ]
    [r] = parse_file(
        write_receipt(
            tmp_path / "acme.labels.json", rows, lines=[0, 0, 1, 1], merchant=None, key=None
        )
    )
    assert r.merchant_name == "ACME FOODS"
    assert r.receipt_id == 1 and len(r.image_id) == 36
    assert r.slug == "acme"
    assert [w.label for w in r.words] == [
        "MERCHANT_NAME",
        "MERCHANT_NAME",
        "PRODUCT_NAME",
        "LINE_TOTAL",
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"tokens": ["a"], "bboxes": [[0, 0, 1, 1]]}, "missing ner_tags"),
        (
            {"tokens": ["a", "b"], "bboxes": [[0, 0, 1, 1]], "ner_tags": ["O", "O"]},
            "differ in length",
        ),
        (
            {"tokens": ["a"], "bboxes": [[0, 0, 1]], "ner_tags": ["O"]},
            "bbox 0 is not four finite numbers",
        ),
        (
            {"tokens": ["a"], "bboxes": [[0, 0, float("inf"), 1]], "ner_tags": ["O"]},
            "bbox 0 is not four finite numbers",
        ),
        (
            {"tokens": ["a"], "bboxes": [[0, 0, 1, 1]], "ner_tags": ["B-total"]},
            "is not O, B-LABEL or I-LABEL",
        ),
        ({"tokens": [], "bboxes": [], "ner_tags": []}, "no tokens"),
        (["not", "an", "object"], "expected a JSON object"),
    ],
)
def test_bad_records_fail_in_one_sentence(data, message):
    with pytest.raises(InputError, match=message) as info:
        parse_record(data, source="x.json", slug="x")
    assert str(info.value).startswith("x.json: ") and str(info.value).count(".") <= 3


def test_bad_files_fail_in_one_sentence(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(InputError, match="is not valid JSON"):
        parse_file(bad)
    with pytest.raises(InputError, match="is not a file"):
        parse_file(tmp_path / "missing.json")


def test_import_is_all_or_nothing_and_idempotent(small, tmp_path, copy_bundled):
    before = len(small.repo.list_receipts())
    labels_before = small.repo.count_labels()
    good = copy_bundled("ralphs")
    bad = tmp_path / "broken.json"
    bad.write_text(json.dumps({"tokens": ["x"], "bboxes": [[0, 0, 1, 1]], "ner_tags": ["Q"]}))
    with pytest.raises(InputError):
        import_files(small, [good, bad])
    assert len(small.repo.list_receipts()) == before  # nothing half-written
    assert small.repo.count_labels() == labels_before
    report = import_files(small, [good])
    assert [r.slug for r in report.added] == ["ralphs"] and report.indexed_words == 95
    again = import_files(small, [good])
    assert again.added == [] and len(again.skipped) == 1


def test_unseen_receipt_can_be_imported_and_validated(small, tmp_path, write_receipt):
    rows = [
        ("CORNER", "B-MERCHANT_NAME"),
        ("STORE", "I-MERCHANT_NAME"),
        ("APPLES", "B-PRODUCT_NAME"),
        ("2.40", "B-LINE_TOTAL"),
        ("SUBTOTAL", "O"),
        ("2.40", "B-SUBTOTAL"),
        ("TOTAL", "O"),
        ("2.59", "B-GRAND_TOTAL"),
    ]
    path = write_receipt(
        tmp_path / "corner.labels.json", rows, lines=[0, 0, 1, 1, 2, 2, 3, 3], key="corner-0001#1"
    )
    report = import_files(small, [path], status=ValidationStatus.PENDING)
    assert report.added[0].slug == "corner" and report.indexed_words == 8
    assert report.unknown_labels == {}
    labels = small.repo.current_labels(receipt_pk=report.added[0].id)
    assert {lab.status for lab in labels} == {ValidationStatus.PENDING}
    ref = resolve_ref(small, "corner", 4, 2, "SUBTOTAL")
    assert ref.word_text == "2.59"
    result = baseline_decide(small, ref)
    assert result.verdict == "NEEDS_REVIEW"
    assert result.run.tool_names == ["check_edge_cases", "search_similar_words"]


def test_labels_outside_the_taxonomy_are_named_in_the_report(small, tmp_path, write_receipt):
    rows = [("SHOP", "B-MERCHANT_NAME"), ("1 Main St", "B-ADDRESS"), ("0.00", "B-CASH_BACK")]
    path = write_receipt(tmp_path / "odd.labels.json", rows, lines=[0, 1, 2], key="odd-0001#1")
    report = import_files(small, [path], index=False)
    assert report.added[0].slug == "odd"  # imported as given
    assert report.unknown_labels == {"odd.labels.json": ["ADDRESS", "CASH_BACK"]}


def test_a_map_renames_a_files_labels_to_the_taxonomys(small, tmp_path, write_receipt):
    rows = [("SHOP", "B-MERCHANT_NAME"), ("1 Main St", "B-ADDRESS"), ("0.00", "B-CASH_BACK")]
    path = write_receipt(tmp_path / "odd.labels.json", rows, lines=[0, 1, 2], key="odd-0002#1")
    with pytest.raises(InputError, match=r"--map CASH_BACK=CASHBACK: CASHBACK is not a label"):
        import_files(small, [path], index=False, rename={"CASH_BACK": "CASHBACK"})
    assert "odd" not in {r.slug for r in small.repo.list_receipts()}  # nothing written
    report = import_files(
        small, [path], index=False, rename={"ADDRESS": "ADDRESS_LINE", "CASH_BACK": "CHANGE"}
    )
    assert report.unknown_labels == {}
    labels = small.repo.current_labels(receipt_pk=report.added[0].id)
    assert sorted(lab.label_type for lab in labels) == ["ADDRESS_LINE", "CHANGE", "MERCHANT_NAME"]
