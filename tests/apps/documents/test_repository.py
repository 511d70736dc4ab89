"""One suite on SQLite and PostgreSQL: JSON-path edits, scoping, completion check."""

from __future__ import annotations

import pytest
from docs_fixtures import ALICE, BOB, INVOICE_TEXT, text_read
from sqlalchemy import text

from casework.apps.documents.repository import CompletionCheck, DocumentsRepository
from casework.errors import InputError, NotFoundError


def _extraction(repo: DocumentsRepository, user: int = ALICE) -> tuple[int, int]:
    doc = repo.add_document(user, filename="inv.pdf", data=b"%PDF-x", read=text_read(INVOICE_TEXT))
    ext = repo.create_extraction(user, doc.id)
    return doc.id, ext.id


def test_update_and_remove_field_by_path(any_repo: DocumentsRepository) -> None:
    repo = any_repo
    _, ext = _extraction(repo)
    fields = {
        "vendor": {"name": "Acme"},
        "items": [{"price": 30.0}, {"price": 12.5}],
        "total": 45.1,
    }
    repo.set_fields(ALICE, ext, fields, {"vendor": 0.9, "items": 0.8, "total": 0.95})
    repo.update_field(ALICE, ext, "items[1].price", 12.75, 0.6)
    repo.update_field(ALICE, ext, "vendor.city", "Leeds", 0.7)
    repo.update_field(ALICE, ext, "currency", "GBP", 1.0)
    got = repo.get_extraction(ALICE, ext)
    assert got.fields == {
        "vendor": {"name": "Acme", "city": "Leeds"},
        "items": [{"price": 30.0}, {"price": 12.75}],
        "total": 45.1,
        "currency": "GBP",
    }
    assert got.confidence_scores == {
        "vendor": {"name": 0.9, "city": 0.7},
        "items": [0.8, {"price": 0.6}],  # the sibling keeps its whole-item score
        "total": 0.95,
        "currency": 1.0,
    }
    repo.remove_field(ALICE, ext, "items[0]")
    repo.remove_field(ALICE, ext, "vendor.city")
    got = repo.get_extraction(ALICE, ext)
    assert got.fields["items"] == [{"price": 12.75}]
    assert got.fields["vendor"] == {"name": "Acme"}
    assert "city" not in got.confidence_scores["vendor"]
    assert got.updated_at is not None


def test_bad_paths_write_nothing(any_repo: DocumentsRepository) -> None:
    repo = any_repo
    _, ext = _extraction(repo)
    repo.set_fields(ALICE, ext, {"total": 1, "items": [1]}, {"total": 0.5, "items": 0.5})
    for path, exc in [
        ("buyer.name", "no field 'buyer'"),
        ("items[4]", "out of range"),
        ("a..b", "extra '.'"),
        ("total.x", "not an object"),
    ]:
        with pytest.raises(InputError, match=exc):
            repo.update_field(ALICE, ext, path, 1, 0.5)
    with pytest.raises(InputError, match="no field 'nothing'"):
        repo.remove_field(ALICE, ext, "nothing")
    with pytest.raises(InputError, match=r"Confidence must be 0\.0-1\.0, got 1\.2"):
        repo.update_field(ALICE, ext, "total", 2, 1.2)
    assert repo.get_extraction(ALICE, ext).fields == {"total": 1, "items": [1]}


def test_another_users_rows_do_not_exist(any_repo: DocumentsRepository) -> None:
    repo = any_repo
    doc, ext = _extraction(repo, ALICE)
    repo.set_fields(ALICE, ext, {"total": 1}, {"total": 0.5})
    with pytest.raises(NotFoundError) as mine_missing:
        repo.get_extraction(ALICE, 999_999)
    with pytest.raises(NotFoundError) as theirs:
        repo.get_extraction(BOB, ext)
    assert str(theirs.value) == str(mine_missing.value).replace("999999", str(ext))
    with pytest.raises(NotFoundError):
        repo.update_field(BOB, ext, "total", 2, 0.9)
    with pytest.raises(NotFoundError):
        repo.remove_field(BOB, ext, "total")
    with pytest.raises(NotFoundError):
        repo.get_document(BOB, doc)
    assert repo.document_text(BOB, doc) is None
    assert doc not in [d.id for d in repo.list_documents(BOB)]  # the server is shared by tests
    assert repo.get_extraction(ALICE, ext).fields == {"total": 1}


@pytest.mark.slow
@pytest.mark.postgres
def test_sql_functions_filter_on_user_id(pg_url: str) -> None:
    from casework.stores.sql import get_engine, migrate

    engine = get_engine(pg_url)
    migrate(engine)
    repo = DocumentsRepository(engine)
    _, ext = _extraction(repo)
    repo.set_fields(ALICE, ext, {"total": 1}, {"total": 0.5})
    with engine.begin() as conn:  # called directly with the wrong user: a no-op
        conn.execute(
            text("SELECT update_extraction_field(:e, :u, ARRAY['total'], '99'::jsonb, 0.1)"),
            {"e": ext, "u": BOB},
        )
        conn.execute(
            text("SELECT remove_extraction_field(:e, :u, ARRAY['total'])"), {"e": ext, "u": BOB}
        )
    assert repo.get_extraction(ALICE, ext).fields == {"total": 1}


def test_complete_refuses_without_fields(any_repo: DocumentsRepository) -> None:
    repo = any_repo
    _, ext = _extraction(repo)
    with pytest.raises(CompletionCheck, match=r"^Cannot complete: no fields extracted$"):
        repo.complete(ALICE, ext)
    assert repo.get_extraction(ALICE, ext).status == "in_progress"
    repo.set_fields(ALICE, ext, {"a": 1, "b": 2}, {"a": 1, "b": 1})
    assert repo.complete(ALICE, ext) == 2
    assert repo.get_extraction(ALICE, ext).status == "completed"
