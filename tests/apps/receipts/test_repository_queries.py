"""The repository makes a fixed number of queries, writes in batches, and cases come from labels."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event

from casework.apps.receipts.dataset import CONFUSIONS, build_cases
from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.importer import parse_file
from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import bundled_receipt_files, import_files
from casework.config import Settings
from casework.errors import NotFoundError


@contextmanager
def count_queries(deps: ReceiptsDeps) -> Iterator[list[str]]:
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    engine = deps.repo.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


def fresh(tmp_path: Path) -> ReceiptsDeps:
    return build_deps(Settings(home=tmp_path / "home"), with_vectors=False)


def files(*slugs: str) -> list[Path]:
    return [p for p in bundled_receipt_files() if p.name.split(".")[0] in slugs]


def test_list_receipts_makes_one_query_however_many_receipts(tmp_path):
    deps = fresh(tmp_path)
    import_files(deps, files("chevron"), index=False)
    with count_queries(deps) as one:
        (chevron,) = deps.repo.list_receipts()
    import_files(deps, files("costco", "cvs", "target", "walgreens"), index=False)
    with count_queries(deps) as five:
        receipts = deps.repo.list_receipts()
    selects = lambda qs: [q for q in qs if q.lstrip().upper().startswith("SELECT")]  # noqa: E731
    assert len(selects(one)) == len(selects(five)) == 1
    assert [r.slug for r in receipts] == ["chevron", "costco", "cvs", "target", "walgreens"]
    parsed = parse_file(files("chevron")[0])[0]
    assert chevron.line_count == len(parsed.lines)
    assert chevron.word_count == sum(len(ln.words) for ln in parsed.lines)
    assert [r.slug for r in deps.repo.list_receipts(merchant="CHEVRON")] == ["chevron"]


def test_import_writes_words_in_batches(tmp_path):
    deps = fresh(tmp_path)
    (path,) = files("costco")
    words = sum(len(ln.words) for ln in parse_file(path)[0].lines)
    assert words == 228
    with count_queries(deps) as queries:
        import_files(deps, [path], index=False)
    inserts = Counter(q.split("(")[0].strip() for q in queries if q.startswith("INSERT"))
    # One INSERT statement per table, not one per word (SQLite may split a huge batch).
    assert inserts["INSERT INTO receipts_words"] <= 2
    assert inserts["INSERT INTO receipts_labels"] <= 2
    assert len(queries) < 40
    (receipt,) = deps.repo.list_receipts()
    assert receipt.word_count == words
    stored = deps.repo.words(receipt.id)
    assert [(w.line_id, w.word_id) for w in stored] == sorted(
        (w.line_id, w.word_id) for w in stored
    )
    labels = deps.repo.current_labels(receipt_pk=receipt.id)
    assert {lab.word_pk for lab in labels} <= {w.id for w in stored}
    assert all(lab.status == ValidationStatus.VALID for lab in labels)


def test_cases_cover_every_valid_label_of_the_named_receipts(tmp_path):
    deps = fresh(tmp_path)
    import_files(deps, files("chevron", "bluebottle"), index=False)
    chevron = deps.repo.resolve_receipt("chevron")
    labels = deps.repo.current_labels(receipt_pk=chevron.id)
    cases = build_cases(deps.repo, ["chevron"])
    gold = [c for c in cases if c["metadata"]["kind"] == "gold"]
    assert len(gold) == len(labels)
    assert {(c["inputs"]["line_id"], c["inputs"]["word_id"]) for c in gold} == {
        (lab.line_id, lab.word_id) for lab in labels
    }
    for c in cases:
        gold_label, suggested = c["metadata"]["pair"].split("->")
        assert c["expected"] == {
            "verdict": "VALID" if gold_label == suggested else "INVALID",
            "gold_label": gold_label,
        }
        assert gold_label == suggested or suggested in CONFUSIONS[gold_label]
        assert c["metadata"]["source"] == "chevron.labels.json"
        assert c["inputs"]["receipt"] == chevron.key
    # Seeded per word: adding a receipt changes no existing case.
    both = build_cases(deps.repo)
    assert sorted(map(str, cases)) == sorted(
        str(c) for c in both if c["inputs"]["slug"] == "chevron"
    )
    assert build_cases(deps.repo) == both
    with pytest.raises(NotFoundError):
        build_cases(deps.repo, ["nowhere"])


def test_a_relabelled_word_is_a_case_of_its_new_label(tmp_path):
    deps = fresh(tmp_path)
    import_files(deps, files("chevron"), index=False)
    receipt = deps.repo.resolve_receipt("chevron")
    old = next(
        lab
        for lab in deps.repo.current_labels(receipt_pk=receipt.id)
        if lab.label_type == "GRAND_TOTAL"
    )
    deps.repo.append_labels(
        [
            LabelChange(
                old.word_pk, "GRAND_TOTAL", ValidationStatus.INVALID, "test", replaces_id=old.id
            ),
        ]
    )
    ids = {c["id"] for c in build_cases(deps.repo)}
    assert f"chevron-L{old.line_id}-W{old.word_id}-GRAND_TOTAL" not in ids
