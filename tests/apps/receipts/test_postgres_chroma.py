"""PostgreSQL and Chroma together: seed a PostgreSQL store, embed its words, query neighbours."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from casework.apps.receipts import evidence
from casework.apps.receipts.baseline import baseline_decide
from casework.apps.receipts.dataset import build_cases
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.labels import resolve_ref
from casework.apps.receipts.service import (
    bundled_receipt_files,
    import_files,
)
from casework.config import Settings
from pg import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pg_settings(tmp_path_factory):
    server = PostgresServer()
    try:
        url = server.start()
        yield Settings(home=tmp_path_factory.mktemp("pg-chroma-home"), database_url=url)
    finally:
        server.stop()


def test_seed_and_vector_query_on_postgres(pg_settings):
    deps = build_deps(pg_settings)
    assert deps.vectors is not None and deps.repo.engine.dialect.name == "postgresql"
    files = [p for p in bundled_receipt_files() if p.name.split(".")[0] in ("costco", "wildfork")]
    report = import_files(deps, files)
    assert report.vector_error is None
    assert sorted(r.slug for r in report.added) == ["costco", "wildfork"]
    words = sum(r.word_count for r in report.added)
    assert report.indexed_words == words == deps.vectors.count()

    # The neighbours of Costco's grand total come from the PostgreSQL rows behind the vectors.
    ref = resolve_ref(deps, "costco", 42, 3, "GRAND_TOTAL")
    similar = evidence.similar_words_summary(deps, ref, n=5)
    assert similar["status"] == "ok" and len(similar["neighbours"]) == 5
    assert similar["neighbours"][0]["merchant"] in ("Costco Wholesale", "Wild Fork")
    assert "303.83" not in [nb["word"] for nb in similar["neighbours"]]  # never itself
    assert similar["suggested_label_valid"] >= 1  # Wild Fork's total carries the label too
    result = baseline_decide(deps, ref)
    assert result.unavailable == [] and (result.verdict, result.confidence) == (
        "NEEDS_REVIEW",
        50.0,
    )

    statements: list[str] = []
    listen = lambda *a: statements.append(a[2])  # noqa: E731
    event.listen(deps.repo.engine, "before_cursor_execute", listen)
    try:
        receipts = deps.repo.list_receipts()
    finally:
        event.remove(deps.repo.engine, "before_cursor_execute", listen)
    assert len(statements) == 1 and [r.slug for r in receipts] == ["costco", "wildfork"]
    assert deps.repo.version()[0] == max(r.id for r in receipts)

    cases = build_cases(deps.repo, ["wildfork"])
    labels = deps.repo.current_labels(receipt_pk=receipts[1].id)
    assert sum(c["metadata"]["kind"] == "gold" for c in cases) == len(labels)
