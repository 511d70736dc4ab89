"""Queries and writes of the vanpool app. Every write that changes a case also appends to the
audit log in the same transaction, so the log and the state never disagree.

A repository acts for one caller (``by(caller)``): the user, or the local operator, who caused
the writes; every audit row it appends names them. ``transaction()`` makes every call inside
it one transaction (a reply's handling: nothing of it survives a crash half-way), and runs
what was handed to ``after_commit`` (the SMTP send) only once it has committed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, exists, func, select, update
from sqlalchemy.orm import Session, aliased

from casework.apps.vanpool.models import (
    ApprovalRequest,
    ApprovalSettled,
    CaseStatus,
    CaseView,
    Employee,
    MessageView,
    Vanpool,
    new_id,
)
from casework.apps.vanpool.tables import (
    AuditRow,
    CaseRow,
    EmployeeRow,
    MessageRow,
    RiderRow,
    ShiftRow,
    ThreadRow,
    VanpoolRow,
)
from casework.errors import NotFoundError
from casework.runtime.review_provider import Cursor, ReviewFilters, age_window, keyset_before
from casework.stores.sql import session_scope

__all__ = [
    "APPROVAL_REQUESTED",
    "CALLER_MAX",
    "OPEN_STATUSES",
    "REVIEW_DECISION",
    "VanpoolRepository",
]

OPEN_STATUSES = tuple(s.value for s in CaseStatus if s is not CaseStatus.CLOSED)
APPROVAL_REQUESTED = "approval_requested"
REVIEW_DECISION = "review_decision"
"""The row a person's decision in the review inbox adds to the log (who decided, and why)."""
CALLER_MAX = 120
"""Characters of a caller kept in the log (the column's width)."""
_WAITING_STATUSES = (CaseStatus.HITL_REVIEW.value, CaseStatus.PRE_CANCEL.value)
_DECISION_ACTIONS = (
    "draft_approved",
    "draft_edited",
    "draft_rejected",
    "case_closed",
    APPROVAL_REQUESTED,
)
"""The rows a decision leaves in the log, first one wins (a cancellation's decision closes the
case; a later request supersedes an earlier one nobody settled)."""


def _approval(detail_json: str) -> dict[str, Any]:
    detail = json.loads(detail_json or "{}")
    approval = (detail.get("meta") or {}).get("approval") or {}
    return approval if isinstance(approval, dict) else {}


def _waiting() -> Any:
    """A request still waits while its case does and no later request replaced it."""
    later = aliased(AuditRow)
    return and_(
        CaseRow.status.in_(_WAITING_STATUSES),
        ~exists().where(
            later.case_id == AuditRow.case_id,
            later.action == APPROVAL_REQUESTED,
            later.id > AuditRow.id,
        ),
    )


def _employee(row: EmployeeRow, shift: ShiftRow | None) -> Employee:
    return Employee(
        employee_id=row.employee_id,
        name=row.name,
        email=row.email,
        home_zip=row.home_zip,
        home_lat=row.home_lat,
        home_lng=row.home_lng,
        site=row.site,
        shift_id=shift.shift_id if shift else None,
        shift_name=shift.name if shift else None,
        shift_spec=shift.spec if shift else None,
        timezone=shift.timezone if shift else None,
        pto=row.pto,
    )


@dataclass
class _Unit:
    """The transaction under way in this context: its session and what runs after commit."""

    engine: Engine
    session: Session
    after_commit: list[Callable[[], Any]] = field(default_factory=list)


_unit: ContextVar[_Unit | None] = ContextVar("vanpool_unit", default=None)


class VanpoolRepository:
    def __init__(self, engine: Engine, caller: str = "") -> None:
        self.engine = engine
        self.caller = caller[:CALLER_MAX]
        """Who the writes are for; every audit row names them."""

    def by(self, caller: str) -> VanpoolRepository:
        """The same store, writing for ``caller``."""
        return VanpoolRepository(self.engine, caller)

    def _current(self) -> _Unit | None:
        unit = _unit.get()
        return unit if unit is not None and unit.engine is self.engine else None

    def session(self) -> Any:
        unit = self._current()
        return nullcontext(unit.session) if unit is not None else session_scope(self.engine)

    def in_transaction(self) -> bool:
        return self._current() is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every repository call inside is one transaction (nested ones join it); on commit,
        the ``after_commit`` callbacks run in order, on error nothing of it is written."""
        if self._current() is not None:
            yield
            return
        with session_scope(self.engine) as s:
            unit = _Unit(self.engine, s)
            token = _unit.set(unit)
            try:
                yield
            finally:
                _unit.reset(token)
        for callback in unit.after_commit:
            callback()

    def after_commit(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` once the transaction under way commits (now, when none is)."""
        unit = self._current()
        if unit is None:
            callback()
        else:
            unit.after_commit.append(callback)

    # ------------------------------------------------------------------ roster
    def upsert_roster(
        self,
        shifts: Sequence[dict[str, Any]],
        employees: Sequence[dict[str, Any]],
        vanpools: Sequence[dict[str, Any]],
        riders: Sequence[tuple[str, str]],
        now: datetime,
        *,
        dry_run: bool = False,
    ) -> dict[str, int]:
        """Insert or update the roster in one transaction (validated rows from ``roster``);
        ``dry_run`` rolls it back, so the counts say what an import would add."""
        counts = {"shifts": 0, "employees": 0, "vanpools": 0, "riders": 0}
        with self.session() as s:
            shift_pk: dict[str, int] = {}
            for sh in shifts:
                row = s.scalar(select(ShiftRow).where(ShiftRow.shift_id == sh["shift_id"]))
                if row is None:
                    row = ShiftRow(**sh)
                    s.add(row)
                    counts["shifts"] += 1
                else:
                    row.name, row.spec, row.timezone = sh["name"], sh["spec"], sh["timezone"]
                s.flush()
                shift_pk[sh["shift_id"]] = row.id
            emp_pk: dict[str, int] = {}
            for e in employees:
                data = {k: v for k, v in e.items() if k != "shift_id"}
                data["shift_pk"] = shift_pk[e["shift_id"]] if e["shift_id"] else None
                row = s.scalar(
                    select(EmployeeRow).where(EmployeeRow.employee_id == e["employee_id"])
                )
                if row is None:
                    row = EmployeeRow(**data, updated_at=now)
                    s.add(row)
                    counts["employees"] += 1
                else:
                    for k, v in data.items():
                        setattr(row, k, v)
                    row.updated_at = now
                s.flush()
                emp_pk[e["employee_id"]] = row.id
            vp_pk: dict[str, int] = {}
            for v in vanpools:
                row = s.scalar(select(VanpoolRow).where(VanpoolRow.vanpool_id == v["vanpool_id"]))
                if row is None:
                    row = VanpoolRow(**v)
                    s.add(row)
                    counts["vanpools"] += 1
                else:
                    for k, val in v.items():
                        setattr(row, k, val)
                s.flush()
                vp_pk[v["vanpool_id"]] = row.id
            for vanpool_id, employee_id in riders:
                if employee_id not in emp_pk:
                    emp_pk[employee_id] = self._employee_pk(s, employee_id)
                existing = s.scalar(
                    select(RiderRow).where(
                        RiderRow.vanpool_pk == vp_pk[vanpool_id],
                        RiderRow.employee_pk == emp_pk[employee_id],
                    )
                )
                if existing is None:
                    s.add(
                        RiderRow(
                            vanpool_pk=vp_pk[vanpool_id],
                            employee_pk=emp_pk[employee_id],
                            joined_at=now,
                        )
                    )
                    counts["riders"] += 1
            if dry_run:
                s.rollback()
        return counts

    def _employee_pk(self, s: Session, employee_id: str) -> int:
        pk = s.scalar(select(EmployeeRow.id).where(EmployeeRow.employee_id == employee_id))
        if pk is None:
            raise NotFoundError(f"Employee {employee_id} does not exist; import it first.")
        return pk

    def get_employee(self, employee_id: str) -> Employee:
        with self.session() as s:
            row = s.execute(
                select(EmployeeRow, ShiftRow)
                .outerjoin(ShiftRow, ShiftRow.id == EmployeeRow.shift_pk)
                .where(EmployeeRow.employee_id == employee_id)
            ).first()
            if row is None:
                raise NotFoundError(f"Employee {employee_id} does not exist.")
            return _employee(*row)

    def update_employee(self, employee_id: str, now: datetime, **changes: Any) -> Employee:
        """Change an employee's home or PTO (what the employee portal would write)."""
        with self.session() as s:
            row = s.scalar(select(EmployeeRow).where(EmployeeRow.employee_id == employee_id))
            if row is None:
                raise NotFoundError(f"Employee {employee_id} does not exist.")
            for k, v in changes.items():
                setattr(row, k, v)
            row.updated_at = now
        return self.get_employee(employee_id)

    def vanpool_ids(self) -> list[str]:
        with self.session() as s:
            return list(s.scalars(select(VanpoolRow.vanpool_id).order_by(VanpoolRow.vanpool_id)))

    def get_vanpool(self, vanpool_id: str) -> Vanpool:
        """The vanpool with its current riders (cancelled memberships left out)."""
        with self.session() as s:
            vp = s.scalar(select(VanpoolRow).where(VanpoolRow.vanpool_id == vanpool_id))
            if vp is None:
                raise NotFoundError(f"Vanpool {vanpool_id} does not exist.")
            rows = s.execute(
                select(EmployeeRow, ShiftRow)
                .join(RiderRow, RiderRow.employee_pk == EmployeeRow.id)
                .outerjoin(ShiftRow, ShiftRow.id == EmployeeRow.shift_pk)
                .where(RiderRow.vanpool_pk == vp.id, RiderRow.removed_at.is_(None))
                .order_by(EmployeeRow.employee_id)
            ).all()
            return Vanpool(
                vanpool_id=vp.vanpool_id,
                work_site=vp.work_site,
                pickup_zip=vp.pickup_zip,
                pickup_lat=vp.pickup_lat,
                pickup_lng=vp.pickup_lng,
                departure_time=vp.departure_time,
                return_time=vp.return_time,
                timezone=vp.timezone,
                max_commute_miles=vp.max_commute_miles,
                riders=[_employee(e, sh) for e, sh in rows],
            )

    def remove_rider(self, vanpool_id: str, employee_id: str, now: datetime) -> bool:
        """End a membership; False when it was already ended (idempotent)."""
        with self.session() as s:
            rider = s.scalar(
                select(RiderRow)
                .join(VanpoolRow, VanpoolRow.id == RiderRow.vanpool_pk)
                .join(EmployeeRow, EmployeeRow.id == RiderRow.employee_pk)
                .where(VanpoolRow.vanpool_id == vanpool_id, EmployeeRow.employee_id == employee_id)
            )
            if rider is None:
                raise NotFoundError(f"{employee_id} is not a rider of {vanpool_id}.")
            if rider.removed_at is not None:
                return False
            rider.removed_at = now
            return True

    # ------------------------------------------------------------------ cases
    def _case_view(self, s: Session, row: CaseRow) -> CaseView:
        vanpool_id = s.scalar(select(VanpoolRow.vanpool_id).where(VanpoolRow.id == row.vanpool_pk))
        thread_id = s.scalar(
            select(ThreadRow.thread_id).where(ThreadRow.case_pk == row.id).order_by(ThreadRow.id)
        )
        return CaseView(
            case_id=row.case_id,
            vanpool_id=vanpool_id or "",
            status=row.status,
            meta=json.loads(row.meta or "{}"),
            outcome=row.outcome,
            created_at=row.created_at,
            updated_at=row.updated_at,
            resolved_at=row.resolved_at,
            due_at=row.due_at,
            thread_id=thread_id,
        )

    def get_case(self, case_id: str) -> CaseView:
        with self.session() as s:
            row = s.scalar(select(CaseRow).where(CaseRow.case_id == case_id))
            if row is None:
                raise NotFoundError(
                    f"Case {case_id} does not exist; `casework vanpool cases` lists them."
                )
            return self._case_view(s, row)

    def open_case_for(self, vanpool_id: str) -> CaseView | None:
        """The vanpool's open case (one case per vanpool), if any."""
        with self.session() as s:
            row = s.scalar(
                select(CaseRow)
                .join(VanpoolRow, VanpoolRow.id == CaseRow.vanpool_pk)
                .where(VanpoolRow.vanpool_id == vanpool_id, CaseRow.status.in_(OPEN_STATUSES))
                .order_by(CaseRow.id.desc())
            )
            return self._case_view(s, row) if row else None

    def list_cases(self, status: str | None = None) -> list[CaseView]:
        with self.session() as s:
            q = select(CaseRow).order_by(CaseRow.id)
            if status:
                q = q.where(CaseRow.status == status)
            return [self._case_view(s, r) for r in s.scalars(q)]

    def create_case(
        self, vanpool_id: str, meta: dict[str, Any], now: datetime, actor: str
    ) -> CaseView:
        with self.session() as s:
            vp_pk = s.scalar(select(VanpoolRow.id).where(VanpoolRow.vanpool_id == vanpool_id))
            if vp_pk is None:
                raise NotFoundError(f"Vanpool {vanpool_id} does not exist.")
            row = CaseRow(
                case_id=new_id("CASE"),
                vanpool_pk=vp_pk,
                status=CaseStatus.OPEN.value,
                meta=json.dumps(meta),
                created_at=now,
                updated_at=now,
            )
            s.add(row)
            s.flush()
            self._audit(s, now, actor, "case_opened", row.case_id, vanpool_id, meta)
            return self._case_view(s, row)

    def update_case(
        self,
        case_id: str,
        now: datetime,
        actor: str,
        *,
        status: str | None = None,
        meta: dict[str, Any] | None = None,
        outcome: str | None = None,
        due_at: datetime | None = None,
        clear_due: bool = False,
        action: str = "case_updated",
    ) -> CaseView:
        with self.session() as s:
            row = s.scalar(select(CaseRow).where(CaseRow.case_id == case_id))
            if row is None:
                raise NotFoundError(f"Case {case_id} does not exist.")
            detail: dict[str, Any] = {"from": row.status}
            if status:
                row.status = status
                detail["to"] = status
            if meta is not None:
                merged = {**json.loads(row.meta or "{}"), **meta, "updated_by": actor}
                row.meta = json.dumps(merged)
                detail["meta"] = meta
            if outcome:
                row.outcome = outcome
                row.resolved_at = now
                detail["outcome"] = outcome
            if due_at is not None:
                row.due_at = due_at
            if clear_due:
                row.due_at = None
            row.updated_at = now
            view = self._case_view(s, row)
            self._audit(s, now, actor, action, case_id, view.vanpool_id, detail)
            return view

    def due_cases(self, now: datetime) -> list[CaseView]:
        """Cases waiting for a reply whose timeout has passed."""
        with self.session() as s:
            rows = s.scalars(
                select(CaseRow)
                .where(CaseRow.status == CaseStatus.PENDING_REPLY.value, CaseRow.due_at <= now)
                .order_by(CaseRow.id)
            )
            return [self._case_view(s, r) for r in rows]

    # ------------------------------------------------------------------ email
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

    # ------------------------------------------------------------------ audit log
    def _audit(
        self,
        s: Session,
        now: datetime,
        actor: str,
        action: str,
        case_id: str | None,
        vanpool_id: str | None,
        detail: dict[str, Any],
    ) -> None:
        s.add(
            AuditRow(
                at=now,
                actor=actor,
                caller=self.caller,
                action=action,
                case_id=case_id,
                vanpool_id=vanpool_id,
                detail=json.dumps(detail, default=str),
            )
        )

    def audit(
        self,
        now: datetime,
        actor: str,
        action: str,
        *,
        case_id: str | None = None,
        vanpool_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        with self.session() as s:
            self._audit(s, now, actor, action, case_id, vanpool_id, detail or {})

    def audit_log(
        self, case_id: str | None = None, vanpool_id: str | None = None
    ) -> list[dict[str, Any]]:
        with self.session() as s:
            q = select(AuditRow).order_by(AuditRow.id)
            if case_id:
                q = q.where(AuditRow.case_id == case_id)
            if vanpool_id:
                q = q.where(AuditRow.vanpool_id == vanpool_id)
            return [
                {
                    "at": r.at,
                    "actor": r.actor,
                    "caller": r.caller,
                    "action": r.action,
                    "case_id": r.case_id,
                    "vanpool_id": r.vanpool_id,
                    "detail": json.loads(r.detail),
                }
                for r in s.scalars(q)
            ]

    # ------------------------------------------------------------------ approval requests
    def _requests_where(self, waiting: bool, filters: ReviewFilters) -> list[Any]:
        where: list[Any] = [AuditRow.action == APPROVAL_REQUESTED]
        where.append(_waiting() if waiting else ~_waiting())
        return where + age_window(AuditRow.at, filters)

    def approval_requests(
        self, waiting: bool, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ApprovalRequest]:
        """Requests still waiting (or settled), newest first, with their drafts' text."""
        where = self._requests_where(waiting, filters)
        where += keyset_before(AuditRow.at, AuditRow.id, before)
        q = (
            select(AuditRow.id, AuditRow.at, AuditRow.case_id, AuditRow.vanpool_id, AuditRow.detail)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(*where)
            .order_by(AuditRow.at.desc(), AuditRow.id.desc())
            .limit(limit)
        )
        with self.session() as s:
            rows = s.execute(q).all()
            drafts = [_approval(r.detail).get("message_id") for r in rows]
            bodies = dict(
                s.execute(
                    select(MessageRow.message_id, MessageRow.body).where(
                        MessageRow.message_id.in_([d for d in drafts if d])
                    )
                ).all()
            )
        return [
            ApprovalRequest(
                id=r.id,
                at=r.at,
                case_id=r.case_id or "",
                vanpool_id=r.vanpool_id or "",
                approval=_approval(r.detail),
                draft_body=bodies.get(str(_approval(r.detail).get("message_id")), ""),
            )
            for r in rows
        ]

    def count_approval_requests(self, waiting: bool, filters: ReviewFilters) -> int:
        q = (
            select(func.count())
            .select_from(AuditRow)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(*self._requests_where(waiting, filters))
        )
        with self.session() as s:
            return int(s.scalar(q) or 0)

    def approval_request(self, request_id: int) -> ApprovalRequest:
        with self.session() as s:
            row = s.scalar(
                select(AuditRow).where(
                    AuditRow.id == request_id, AuditRow.action == APPROVAL_REQUESTED
                )
            )
            if row is None or not row.case_id:
                raise NotFoundError(f"No vanpool approval {request_id}; open one from the inbox.")
            return ApprovalRequest(
                id=row.id,
                at=row.at,
                case_id=row.case_id,
                vanpool_id=row.vanpool_id or "",
                approval=_approval(row.detail),
            )

    def approval_waiting(self, request_id: int) -> bool:
        q = (
            select(func.count())
            .select_from(AuditRow)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(AuditRow.id == request_id, _waiting())
        )
        with self.session() as s:
            return bool(s.scalar(q))

    def approval_settled(self, request: ApprovalRequest) -> ApprovalSettled | None:
        """How the request was settled (the first decision row after it) and by whom (the
        first reviewer's row, else that decision row's actor); None while nothing settled it."""
        later = (AuditRow.case_id == request.case_id, AuditRow.id > request.id)
        with self.session() as s:
            row = s.scalar(
                select(AuditRow)
                .where(*later, AuditRow.action.in_(_DECISION_ACTIONS))
                .order_by(AuditRow.id)
                .limit(1)
            )
            if row is None:
                return None
            reviewer = s.scalar(
                select(AuditRow)
                .where(*later, AuditRow.action == REVIEW_DECISION)
                .order_by(AuditRow.id)
                .limit(1)
            )
            by = reviewer if reviewer is not None and row.action != APPROVAL_REQUESTED else row
            return ApprovalSettled(
                action=row.action,
                detail=json.loads(row.detail or "{}"),
                decided_by=by.actor,
                decided_at=by.at,
            )

    def counts(self) -> dict[str, int]:
        with self.session() as s:
            return {
                "employees": s.scalar(select(func.count()).select_from(EmployeeRow)) or 0,
                "vanpools": s.scalar(select(func.count()).select_from(VanpoolRow)) or 0,
                "riders": s.scalar(
                    select(func.count()).select_from(RiderRow).where(RiderRow.removed_at.is_(None))
                )
                or 0,
                "cases": s.scalar(select(func.count()).select_from(CaseRow)) or 0,
            }
