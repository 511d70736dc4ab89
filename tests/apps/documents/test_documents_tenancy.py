"""The adversarial tenancy suite on SQLite and PostgreSQL: 0 cross-tenant reads and writes."""

from __future__ import annotations

from docs_fixtures import ALICE, BOB

from casework.apps.documents.adversarial import PATH_TRICKS, run_tenancy_suite
from casework.apps.documents.repository import DocumentsRepository
from casework.apps.documents.service import tenancy_doors


def test_no_cross_tenant_reads_or_writes(any_repo: DocumentsRepository) -> None:
    report = run_tenancy_suite(any_repo, alice=ALICE, bob=BOB, doors=tenancy_doors())
    assert report.details == []
    assert (report.cross_tenant_reads, report.cross_tenant_writes) == (0, 0)
    # every door was tried: the injected agent's calls, bound tools, stack tools, API calls, paths
    assert report.attempts >= 20 + 2 * len(PATH_TRICKS)


def test_the_suite_sees_a_leak_when_scoping_is_broken(
    repo: DocumentsRepository, monkeypatch
) -> None:
    real = DocumentsRepository.document_text

    def unscoped(self, user_id, document_id):
        from sqlalchemy import select

        from casework.apps.documents.tables import OcrResultRow
        from casework.stores.sql import session_scope

        with session_scope(self.engine) as s:
            row = s.execute(
                select(OcrResultRow.raw_text, OcrResultRow.page_count).where(
                    OcrResultRow.document_id == document_id
                )
            ).one_or_none()
            return (row[0], row[1]) if row else real(self, user_id, document_id)

    monkeypatch.setattr(DocumentsRepository, "document_text", unscoped)
    report = run_tenancy_suite(repo, alice=ALICE, bob=BOB, doors=tenancy_doors())
    assert report.cross_tenant_reads >= 1 and "read: bob-bound get_document_text" in report.details
