"""Tenant scoping: a user reads their rows and the shared ones, writes only their own."""

from __future__ import annotations

from sqlalchemy import Integer, MetaData, String, create_engine, delete, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from casework.runtime.context import (
    Caller,
    Role,
    TenantScoped,
    owner_for,
    visible_to,
    writable_by,
)


class _Base(DeclarativeBase):
    metadata = MetaData()


class Note(TenantScoped, _Base):
    __tablename__ = "notes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(String(50))


ANA = Caller(user_id=1, name="ana", role=Role.USER)
BOB = Caller(user_id=2, name="bob", role=Role.ADMIN)


def _session() -> Session:
    engine = create_engine("sqlite://")
    _Base.metadata.create_all(engine)
    session = Session(engine)
    session.add_all(
        [
            Note(text="demo", owner_id=owner_for(None)),
            Note(text="ana's", owner_id=owner_for(ANA)),
            Note(text="bob's", owner_id=owner_for(BOB)),
        ]
    )
    session.commit()
    return session


def _texts(session: Session, where) -> list[str]:
    return list(session.scalars(select(Note.text).where(where).order_by(Note.id)))


def test_reads_see_own_and_shared_rows_writes_only_own():
    session = _session()
    assert Note.__table__.c.owner_id.nullable and Note.__table__.c.owner_id.index
    assert _texts(session, visible_to(Note.owner_id, ANA)) == ["demo", "ana's"]
    assert _texts(session, visible_to(Note.owner_id, BOB)) == ["demo", "bob's"]
    assert _texts(session, visible_to(Note.owner_id, None)) == ["demo", "ana's", "bob's"]
    assert _texts(session, writable_by(Note.owner_id, ANA)) == ["ana's"]
    # A role does not widen data access: an admin's rows are scoped like anyone's.
    session.execute(delete(Note).where(writable_by(Note.owner_id, BOB)))
    assert _texts(session, visible_to(Note.owner_id, None)) == ["demo", "ana's"]
    session.execute(delete(Note).where(Note.text == "demo", writable_by(Note.owner_id, ANA)))
    assert _texts(session, visible_to(Note.owner_id, ANA)) == ["demo", "ana's"]
