"""Email threads and their messages: drafts, sends, replies and which replies were claimed."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from casework.apps.vanpool.models import (
    MessageView,
    new_id,
)
from casework.apps.vanpool.repository.transaction import TransactionScope
from casework.apps.vanpool.tables import (
    CaseRow,
    MessageRow,
    ThreadRow,
)
from casework.errors import NotFoundError


class ThreadStore(TransactionScope):
    """A case's email threads and messages."""

    def create_thread(
        self, case_id: str, subject: str, recipients: list[str], now: datetime
    ) -> str:
        with self.session() as s:
            case_pk = s.scalar(select(CaseRow.id).where(CaseRow.case_id == case_id))
            if case_pk is None:
                raise NotFoundError(f"Case {case_id} does not exist.")
            row = ThreadRow(
                thread_id=new_id("THREAD"),
                case_pk=case_pk,
                subject=subject,
                recipients=json.dumps(recipients),
                created_at=now,
            )
            s.add(row)
            return row.thread_id

    def thread_case(self, thread_id: str) -> str:
        """The case a thread belongs to; an unknown thread is a ``NotFoundError``."""
        with self.session() as s:
            case_id = s.scalar(
                select(CaseRow.case_id)
                .join(ThreadRow, ThreadRow.case_pk == CaseRow.id)
                .where(ThreadRow.thread_id == thread_id)
            )
            if case_id is None:
                raise NotFoundError(f"Thread {thread_id} does not exist.")
            return case_id

    def thread_info(self, thread_id: str) -> dict[str, Any]:
        with self.session() as s:
            row = s.scalar(select(ThreadRow).where(ThreadRow.thread_id == thread_id))
            if row is None:
                raise NotFoundError(f"Thread {thread_id} does not exist.")
            return {
                "thread_id": row.thread_id,
                "subject": row.subject,
                "recipients": json.loads(row.recipients),
            }

    def add_message(
        self,
        thread_id: str,
        *,
        direction: str,
        status: str,
        sender: str,
        recipients: list[str],
        subject: str,
        body: str,
        now: datetime,
        headers: dict[str, str] | None = None,
        bucket: str | None = None,
        message_id: str | None = None,
    ) -> str:
        with self.session() as s:
            thread_pk = s.scalar(select(ThreadRow.id).where(ThreadRow.thread_id == thread_id))
            if thread_pk is None:
                raise NotFoundError(f"Thread {thread_id} does not exist.")
            row = MessageRow(
                message_id=message_id or new_id("MSG"),
                thread_pk=thread_pk,
                direction=direction,
                status=status,
                sender=sender,
                recipients=json.dumps(recipients),
                subject=subject,
                headers=json.dumps(headers or {}),
                body=body,
                bucket=bucket,
                attempts=0,
                created_at=now,
                next_attempt_at=now if status == "queued" else None,
            )
            s.add(row)
            return row.message_id

    def claim_reply(self, message_id: str, bucket: str) -> bool:
        """Mark a ``received`` reply ``handled`` with its bucket; False when it was not
        waiting (handled already, by a tick or another worker). In a transaction this is the
        write that takes the lock, so a reply is handled once."""
        with self.session() as s:
            done = s.execute(
                update(MessageRow)
                .where(
                    MessageRow.message_id == message_id,
                    MessageRow.direction == "inbound",
                    MessageRow.status == "received",
                )
                .values(status="handled", bucket=bucket)
                .execution_options(synchronize_session="fetch")
            )
            return bool(done.rowcount)

    def received_replies(self) -> list[str]:
        """Replies filed but not handled yet (a crash cut their handling short), oldest first."""
        with self.session() as s:
            return list(
                s.scalars(
                    select(MessageRow.message_id)
                    .where(MessageRow.direction == "inbound", MessageRow.status == "received")
                    .order_by(MessageRow.id)
                )
            )

    def update_message(self, message_id: str, **changes: Any) -> None:
        with self.session() as s:
            row = s.scalar(select(MessageRow).where(MessageRow.message_id == message_id))
            if row is None:
                raise NotFoundError(f"Message {message_id} does not exist.")
            for k, v in changes.items():
                setattr(row, k, json.dumps(v) if k in ("recipients", "headers") else v)

    def _message_view(self, row: MessageRow, thread_id: str) -> MessageView:
        return MessageView(
            message_id=row.message_id,
            thread_id=thread_id,
            direction=row.direction,
            status=row.status,
            sender=row.sender,
            recipients=json.loads(row.recipients),
            subject=row.subject,
            body=row.body,
            bucket=row.bucket,
            attempts=row.attempts,
            last_error=row.last_error,
            created_at=row.created_at,
            sent_at=row.sent_at,
            headers=json.loads(row.headers or "{}"),
        )

    def get_message(self, message_id: str) -> MessageView:
        with self.session() as s:
            row = s.execute(
                select(MessageRow, ThreadRow.thread_id)
                .join(ThreadRow, ThreadRow.id == MessageRow.thread_pk)
                .where(MessageRow.message_id == message_id)
            ).first()
            if row is None:
                raise NotFoundError(f"Message {message_id} does not exist.")
            return self._message_view(*row)

    def messages(self, thread_id: str) -> list[MessageView]:
        with self.session() as s:
            rows = s.execute(
                select(MessageRow, ThreadRow.thread_id)
                .join(ThreadRow, ThreadRow.id == MessageRow.thread_pk)
                .where(ThreadRow.thread_id == thread_id)
                .order_by(MessageRow.id)
            ).all()
            return [self._message_view(*r) for r in rows]

    def queued_messages(self, now: datetime) -> list[MessageView]:
        with self.session() as s:
            rows = s.execute(
                select(MessageRow, ThreadRow.thread_id)
                .join(ThreadRow, ThreadRow.id == MessageRow.thread_pk)
                .where(MessageRow.status == "queued", MessageRow.next_attempt_at <= now)
                .order_by(MessageRow.id)
            ).all()
            return [self._message_view(*r) for r in rows]
