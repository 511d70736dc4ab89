"""The receipts store on a real PostgreSQL server (loopback): migrations, import, the label chain."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from casework.apps.receipts.baseline import baseline_decide
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.labels import resolve_ref
from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import (
    bundled_receipt_files,
    import_files,
    review_decide,
)
from casework.config import Settings
from casework.errors import InputError
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_deps(tmp_path_factory):
    server = PostgresServer()
    try:
        url = server.start()
        settings = Settings(home=tmp_path_factory.mktemp("pg-home"), database_url=url)
        yield build_deps(settings, with_vectors=False)
    finally:
        server.stop()


def test_import_and_label_chain_on_postgres(pg_deps):
    files = [p for p in bundled_receipt_files() if p.name.split(".")[0] in ("wildfork", "chevron")]
    report = import_files(pg_deps, files)
    assert sorted(r.slug for r in report.added) == ["chevron", "wildfork"]
    assert report.vector_error  # no vector store here: reported, not raised
    assert import_files(pg_deps, files).skipped  # idempotent

    ref = resolve_ref(pg_deps, "wildfork", 12, 4, "UNIT_PRICE")
    result = baseline_decide(pg_deps, ref)
    assert (result.verdict, result.unavailable) == ("NEEDS_REVIEW", ["search_similar_words"])

    word = pg_deps.repo.get_word(pg_deps.repo.resolve_receipt("wildfork").id, 12, 4)
    [old] = pg_deps.repo.labels_for_word(word.id)
    [review] = pg_deps.repo.append_labels(
        [
            LabelChange(
                word_pk=word.id,
                label_type="UNIT_PRICE",
                status=ValidationStatus.NEEDS_REVIEW,
                proposed_by="harmonizer",
                consolidated_from_id=old.id,
            )
        ]
    )
    assert [lab.id for lab in pg_deps.repo.review_queue()] == [review.id]
    rows = review_decide(pg_deps, review.id, accept=False, reviewer="pg")
    assert rows[0].status == ValidationStatus.INVALID and rows[0].replaces_id == review.id
    with pytest.raises(InputError, match="already changed"):
        pg_deps.repo.append_labels(
            [
                LabelChange(
                    word_pk=word.id,
                    label_type="UNIT_PRICE",
                    status=ValidationStatus.VALID,
                    proposed_by="t",
                    replaces_id=review.id,
                )
            ]
        )
    assert [
        lab.label_type
        for lab in pg_deps.repo.current_labels(receipt_pk=word.receipt_pk)
        if lab.word_pk == word.id
    ] == ["LINE_TOTAL", "UNIT_PRICE"]
