"""Documents: the uploads and their OCR text, each private to its owner; the base every part
of the repository builds on (the engine, the clock).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from sqlalchemy import (
    Engine,
    select,
)
from sqlalchemy.orm import Session

from casework.apps.documents.models import (
    DocumentInfo,
)
from casework.apps.documents.ocr import ReadResult
from casework.apps.documents.tables import (
    DocumentRow,
    OcrResultRow,
)
from casework.errors import NotFoundError
from casework.stores.sql import session_scope


def utc_now() -> datetime:
    return datetime.now(UTC)


class DocumentStore:
    """A user's documents."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    # ------------------------------------------------------------------ documents
    def add_document(
        self, user_id: int, *, filename: str, data: bytes, read: ReadResult
    ) -> DocumentInfo:
        """The document and its OCR result in one transaction: both or neither."""
        with session_scope(self.engine) as s:
            doc = DocumentRow(
                owner_id=user_id,
                filename=filename[:300],
                media_type=read.media_type,
                size_bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
                created_at=utc_now(),
            )
            s.add(doc)
            s.flush()
            s.add(
                OcrResultRow(
                    owner_id=user_id,
                    document_id=doc.id,
                    raw_text=read.raw_text,
                    page_count=len(read.pages),
                    pages=[p.text for p in read.pages],
                    engine=read.engine,
                    ocr_pages=read.ocr_pages,
                    seconds=round(read.seconds, 3),
                    created_at=doc.created_at,
                )
            )
            s.flush()
            return self._doc_info(s, doc)

    def _doc_info(self, s: Session, doc: DocumentRow) -> DocumentInfo:
        ocr = s.scalars(select(OcrResultRow).where(OcrResultRow.document_id == doc.id)).one()
        return DocumentInfo(
            id=doc.id,
            filename=doc.filename,
            media_type=doc.media_type,
            size_bytes=doc.size_bytes,
            page_count=ocr.page_count,
            engine=ocr.engine,
            ocr_pages=ocr.ocr_pages,
            read_seconds=ocr.seconds,
            created_at=doc.created_at,
        )

    def _doc(self, s: Session, user_id: int, document_id: int) -> DocumentRow:
        row = s.scalars(
            select(DocumentRow).where(
                DocumentRow.id == document_id, DocumentRow.owner_id == user_id
            )
        ).one_or_none()
        if row is None:
            raise NotFoundError(
                f"No document {document_id}; list yours with `casework documents list`."
            )
        return row

    def get_document(self, user_id: int, document_id: int) -> DocumentInfo:
        with session_scope(self.engine) as s:
            return self._doc_info(s, self._doc(s, user_id, document_id))

    def list_documents(self, user_id: int) -> list[DocumentInfo]:
        with session_scope(self.engine) as s:
            rows = s.scalars(
                select(DocumentRow).where(DocumentRow.owner_id == user_id).order_by(DocumentRow.id)
            ).all()
            return [self._doc_info(s, r) for r in rows]

    def document_text(self, user_id: int, document_id: int) -> tuple[str, int] | None:
        """(raw text, page count) of the user's document, or None when there is none."""
        with session_scope(self.engine) as s:
            row = s.execute(
                select(OcrResultRow.raw_text, OcrResultRow.page_count).where(
                    OcrResultRow.document_id == document_id, OcrResultRow.owner_id == user_id
                )
            ).one_or_none()
            return (row[0], row[1]) if row else None
