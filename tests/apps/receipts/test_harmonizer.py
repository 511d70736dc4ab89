"""The harmoniser: outliers, the three outcomes, the audit trail, dry runs, concurrency."""

from __future__ import annotations

import asyncio

import pytest

from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.harmonizer import find_outliers, harmonize
from casework.apps.receipts.models import FixOutcome, ValidationStatus
from casework.apps.receipts.service import import_files
from casework.apps.receipts.strategies import STRATEGIES
from casework.apps.receipts.vectors import word_doc_id

QUICK_MART = [
    ("QUICK", "B-MERCHANT_NAME"),
    ("MART", "I-MERCHANT_NAME"),
    ("1", "B-QUANTITY"),
    ("Iced", "B-PRODUCT_NAME"),
    ("Tea", "B-PRODUCT_NAME"),
    ("3.25", "B-PRODUCT_NAME"),  # price as product
    ("1", "B-QUANTITY"),
    ("Bagel", "B-PRODUCT_NAME"),
    ("2.75", "B-LINE_TOTAL"),
    ("Subtotal", "O"),
    ("6.00", "B-GRAND_TOTAL"),  # a subtotal labelled as the grand total
    ("Tax", "O"),
    ("0.57", "B-TAX"),
    ("TOTAL", "B-GRAND_TOTAL"),
    ("6.57", "B-GRAND_TOTAL"),  # the keyword labelled like the amount
]
LINES = [0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5]
ANSWERS = {
    ("3.25", "LINE_TOTAL"): ("VALID", 95.0),  # -> RELABEL
    ("TOTAL", "GRAND_TOTAL"): (
        "INVALID",
        92.0,
    ),  # no suggestion, label confirmed wrong -> MARK_INVALID
    ("6.00", "SUBTOTAL"): ("NEEDS_REVIEW", 65.0),  # -> REVIEW
}


@pytest.fixture
def quick_mart(small, tmp_path, write_receipt):
    path = write_receipt(
        tmp_path / "quickmart.labels.json",
        QUICK_MART,
        lines=LINES,
        merchant="Quick Mart",
        key="quickmart#1",
    )
    import_files(small, [path])
    return small


def _labels_by_text(deps):
    receipt = deps.repo.resolve_receipt("quickmart")
    out: dict[str, list] = {}
    for w in deps.repo.words(receipt.id):
        out.setdefault(w.text, []).extend(deps.repo.labels_for_word(w.id))
    return out


def test_outliers_and_their_suggestions(quick_mart):
    outliers, scanned = find_outliers(quick_mart, merchant="Quick Mart")
    assert scanned == 13
    found = {(o.label.word_text, o.label.label_type): o for o in outliers}
    assert set(found) == {
        ("3.25", "PRODUCT_NAME"),
        ("6.00", "GRAND_TOTAL"),
        ("TOTAL", "GRAND_TOTAL"),
    }
    assert found[("3.25", "PRODUCT_NAME")].suggestion == "LINE_TOTAL"
    assert found[("3.25", "PRODUCT_NAME")].reasons[0] == "edge case: A price is not a product name."
    assert found[("6.00", "GRAND_TOTAL")].suggestion == "SUBTOTAL"
    assert found[("6.00", "GRAND_TOTAL")].reasons == ["the line makes this amount SUBTOTAL"]
    assert found[("TOTAL", "GRAND_TOTAL")].suggestion is None


def test_three_outcomes_with_their_audit_trail(quick_mart, stub_strategy):
    before = quick_mart.repo.count_labels()
    report = asyncio.run(
        harmonize(
            quick_mart, "stub", stub_strategy(ANSWERS), merchant="Quick Mart", open_deps=build_deps
        )
    )
    outcomes = {f.outlier.label.word_text: f.outcome for f in report.fixes}
    assert outcomes == {
        "3.25": FixOutcome.RELABEL,
        "TOTAL": FixOutcome.MARK_INVALID,
        "6.00": FixOutcome.REVIEW,
    }
    assert report.counts == {"RELABEL": 1, "MARK_INVALID": 1, "REVIEW": 1, "KEEP": 0}
    assert quick_mart.repo.count_labels() == before + 4

    labels = _labels_by_text(quick_mart)
    old, invalidated, relabel = labels["3.25"]
    assert (old.label_type, old.status, old.current) == (
        "PRODUCT_NAME",
        ValidationStatus.VALID,
        False,
    )
    assert (invalidated.label_type, invalidated.status, invalidated.replaces_id) == (
        "PRODUCT_NAME",
        ValidationStatus.INVALID,
        old.id,
    )
    assert (relabel.label_type, relabel.status, relabel.consolidated_from_id) == (
        "LINE_TOTAL",
        ValidationStatus.VALID,
        old.id,
    )
    assert (
        relabel.proposed_by == "harmonizer"
        and relabel.validated_by == "stub"
        and relabel.confidence == 95.0
    )

    keyword_old, keyword_new = labels["TOTAL"]
    assert (keyword_new.status, keyword_new.replaces_id) == (
        ValidationStatus.INVALID,
        keyword_old.id,
    )
    assert keyword_new.reasoning.startswith("edge case: An amount label needs digits")

    sub_old, sub_review = labels["6.00"]
    assert (
        sub_old.current and sub_old.status == ValidationStatus.VALID
    )  # untouched until a person decides
    assert (sub_review.label_type, sub_review.status, sub_review.consolidated_from_id) == (
        "SUBTOTAL",
        ValidationStatus.NEEDS_REVIEW,
        sub_old.id,
    )
    assert [lab.id for lab in quick_mart.repo.review_queue()] == [sub_review.id]

    # vector metadata follows the new labels (no re-embedding)
    receipt = quick_mart.repo.resolve_receipt("quickmart")
    meta = quick_mart.vectors.get(
        ids=[word_doc_id(receipt.image_id, 1, relabel.line_id, relabel.word_id)],
        include=["metadatas"],
    )["metadatas"][0]
    assert (meta["label"], meta["status"]) == ("LINE_TOTAL", "VALID")

    again = asyncio.run(
        harmonize(
            quick_mart, "stub", stub_strategy(ANSWERS), merchant="Quick Mart", open_deps=build_deps
        )
    )
    assert again.fixes == []  # fixed labels are fine now; the one under review waits for a person


def test_dry_run_writes_nothing(quick_mart, stub_strategy):
    before = quick_mart.repo.count_labels()
    report = asyncio.run(
        harmonize(
            quick_mart,
            "stub",
            stub_strategy(ANSWERS),
            merchant="Quick Mart",
            dry_run=True,
            open_deps=build_deps,
        )
    )
    assert report.dry_run and len(report.fixes) == 3 and all(f.changes for f in report.fixes)
    assert all(f.applied_ids == [] for f in report.fixes)
    assert quick_mart.repo.count_labels() == before


@pytest.mark.parametrize("concurrency", [1, 2])
def test_concurrency_is_bounded(quick_mart, stub_strategy, concurrency):
    stub = stub_strategy({})
    asyncio.run(
        harmonize(
            quick_mart, "stub", stub, dry_run=True, concurrency=concurrency, open_deps=build_deps
        )
    )
    assert len(stub.calls) > 10 and stub.max_in_flight == concurrency


def test_repeated_lookups_are_cached(quick_mart, stub_strategy):
    deps = quick_mart.with_cache()
    report = asyncio.run(
        harmonize(deps, "baseline", STRATEGIES["baseline"], dry_run=True, open_deps=build_deps)
    )
    assert report.strategy == "baseline" and report.model is None
    assert report.cache_hits > report.cache_misses > 0
    assert sum(report.counts.values()) == len(report.fixes) > 0


def test_a_failed_validation_goes_to_review(quick_mart):
    def failing(input, deps, config):
        raise RuntimeError("model server down")

    report = asyncio.run(
        harmonize(
            quick_mart,
            "failing",
            failing,
            merchant="Quick Mart",
            dry_run=True,
            open_deps=build_deps,
        )
    )
    assert {f.outcome for f in report.fixes} == {FixOutcome.REVIEW}
    assert all(f.error == "RuntimeError: model server down" for f in report.fixes)
