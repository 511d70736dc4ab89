"""The vanpool app's review provider: pending approvals in the platform inbox.

An item is one ``approval_requested`` row of the case audit log: a ``cancel_membership``
(rules lifecycle or the Case Manager's paused run, both recorded with the case) or a
``send_email_for_review`` draft. It waits while its case still waits on it (the case is in
``hitl_review`` / ``pre_cancel`` and no later request replaced it); afterwards the first
decision row after it in the log says who settled it and how.

Deciding goes through ``service.decide_approval``, the call behind `casework vanpool
approve|edit|reject`: its effects run behind the side-effect journal, so a double press or two
reviewers cancel a membership or send a reply once, and the second one reads who was first.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.orm import aliased

from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.models import CaseStatus, CaseView
from casework.apps.vanpool.service import case_result, decide_approval
from casework.apps.vanpool.tables import AuditRow, CaseRow, MessageRow
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller
from casework.runtime.decision import Decision, Evidence
from casework.runtime.events import Event
from casework.runtime.review import (
    WAITING,
    Action,
    Cursor,
    DecideOutcome,
    ReviewDetail,
    ReviewFilters,
    ReviewItem,
    RunField,
    Section,
    Span,
    age_window,
    keyset_before,
)
from casework.runtime.runconfig import RunConfig
from casework.stores.sql import session_scope

__all__ = ["CANCEL", "DECIDED", "DRAFT", "VanpoolReview"]

CANCEL = "cancel_membership"
DRAFT = "send_email_for_review"
DECIDED = "decided"
REQUESTED = "approval_requested"
REVIEWED = "review_decision"
WAITING_STATUSES = (CaseStatus.HITL_REVIEW.value, CaseStatus.PRE_CANCEL.value)
# The rows a decision leaves in the log, first one wins (a cancellation's decision closes the
# case; a later request supersedes an earlier one nobody settled).
DECISION_ACTIONS = ("draft_approved", "draft_edited", "draft_rejected", "case_closed", REQUESTED)
LABELS = {
    CANCEL: {"approve": "Approve: cancel the membership", "reject": "Reject: keep the riders"},
    DRAFT: {
        "approve": "Approve: send the draft",
        "edit": "Send the edited text",
        "reject": "Reject: do not send",
    },
}


def _approval(detail_json: str) -> dict[str, Any]:
    detail = json.loads(detail_json or "{}")
    approval = (detail.get("meta") or {}).get("approval") or {}
    return approval if isinstance(approval, dict) else {}


def _request_id(item_id: str) -> int:
    if not item_id.isdigit():
        raise NotFoundError(f"No vanpool review item {item_id!r}; open one from the inbox.")
    return int(item_id)


def _outcome(action: str, detail: dict[str, Any]) -> str:
    if action == "case_closed":
        if detail.get("outcome") == "cancelled":
            return "approved: membership cancelled"
        return "rejected: the membership stays"
    return {
        "draft_approved": "approved: the draft was sent",
        "draft_edited": "edited and sent",
        "draft_rejected": "rejected: the draft was not sent",
        REQUESTED: "replaced by a later request",
    }.get(action, action)


def _title(approval: dict[str, Any], case_id: str, vanpool_id: str) -> str:
    if approval.get("action") == CANCEL:
        who = ", ".join(approval.get("employee_ids") or []) or "the failing riders"
        return f"Cancel the membership of {who} in {vanpool_id}"
    return f"Send the drafted reply on {case_id} ({vanpool_id})"


class VanpoolReview:
    """``ReviewProvider`` over the vanpool cases' approvals; deps are opened on first use."""

    app = "vanpool"
    kinds = [CANCEL, DRAFT]
    statuses = [WAITING, DECIDED]

    def __init__(
        self,
        settings: Settings,
        *,
        deps: VanpoolDeps | None = None,
        models: RoleModels | None = None,
    ) -> None:
        self.settings = settings
        self._deps = deps
        self._models = models
        """The models a resumed agent run gets instead of the settings' (tests: scripted)."""
        self._lock = threading.Lock()

    @property
    def deps(self) -> VanpoolDeps:
        with self._lock:
            if self._deps is None:
                self._deps = build_deps(self.settings)
            return self._deps

    def _config(self, caller: Caller) -> RunConfig:
        config = RunConfig.of(self.deps.settings, caller=caller)
        return replace(config, models=self._models) if self._models is not None else config

    # ------------------------------------------------------------------ listing
    @staticmethod
    def _waiting() -> Any:
        later = aliased(AuditRow)
        return and_(
            CaseRow.status.in_(WAITING_STATUSES),
            ~exists().where(
                later.case_id == AuditRow.case_id, later.action == REQUESTED, later.id > AuditRow.id
            ),
        )

    def _where(self, filters: ReviewFilters) -> list[Any]:
        where: list[Any] = [AuditRow.action == REQUESTED]
        if filters.status == WAITING:
            where.append(self._waiting())
        elif filters.status == DECIDED:
            where.append(~self._waiting())
        else:
            raise InputError(
                f"Unknown status {filters.status!r}; use one of: {', '.join(self.statuses)}."
            )
        where += age_window(AuditRow.at, filters)
        return where

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        where = self._where(filters)
        where += keyset_before(AuditRow.at, AuditRow.id, before)
        q = (
            select(AuditRow.id, AuditRow.at, AuditRow.case_id, AuditRow.vanpool_id, AuditRow.detail)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(*where)
            .order_by(AuditRow.at.desc(), AuditRow.id.desc())
            .limit(limit)
        )
        with session_scope(self.deps.repo.engine) as s:
            rows = s.execute(q).all()
            drafts = [_approval(r.detail).get("message_id") for r in rows]
            bodies = dict(
                s.execute(
                    select(MessageRow.message_id, MessageRow.body).where(
                        MessageRow.message_id.in_([d for d in drafts if d])
                    )
                ).all()
            )
        items = []
        for r in rows:
            approval = _approval(r.detail)
            kind = approval.get("action", CANCEL)
            if kind == DRAFT:
                summary = f"{r.case_id}: {bodies.get(str(approval.get('message_id')), '')[:160]}"
            else:
                summary = f"{r.case_id}, after {approval.get('mode', 'rules')} review"
            items.append(
                ReviewItem(
                    app=self.app,
                    kind=kind,
                    id=str(r.id),
                    sort_id=r.id,
                    title=_title(approval, r.case_id or "", r.vanpool_id or ""),
                    status=filters.status,
                    created_at=r.at,
                    summary=summary,
                )
            )
        return items

    def count(self, filters: ReviewFilters) -> int:
        q = (
            select(func.count())
            .select_from(AuditRow)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(*self._where(filters))
        )
        with session_scope(self.deps.repo.engine) as s:
            return int(s.scalar(q) or 0)

    # ------------------------------------------------------------------ one item
    def _request(self, item_id: str) -> AuditRow:
        with session_scope(self.deps.repo.engine) as s:
            row = s.scalar(
                select(AuditRow).where(
                    AuditRow.id == _request_id(item_id), AuditRow.action == REQUESTED
                )
            )
            if row is None or not row.case_id:
                raise NotFoundError(f"No vanpool approval {item_id}; open one from the inbox.")
            s.expunge(row)
            return row

    def _is_waiting(self, request: AuditRow) -> bool:
        q = (
            select(func.count())
            .select_from(AuditRow)
            .join(CaseRow, CaseRow.case_id == AuditRow.case_id)
            .where(AuditRow.id == request.id, self._waiting())
        )
        with session_scope(self.deps.repo.engine) as s:
            return bool(s.scalar(q))

    def _first_decision(self, request: AuditRow) -> DecideOutcome | None:
        """How the request was settled (the first decision row after it) and by whom (the
        first reviewer's row, else that decision row's actor)."""
        with session_scope(self.deps.repo.engine) as s:
            row = s.scalar(
                select(AuditRow)
                .where(
                    AuditRow.case_id == request.case_id,
                    AuditRow.id > request.id,
                    AuditRow.action.in_(DECISION_ACTIONS),
                )
                .order_by(AuditRow.id)
                .limit(1)
            )
            if row is None:
                return None
            reviewer = s.scalar(
                select(AuditRow)
                .where(
                    AuditRow.case_id == request.case_id,
                    AuditRow.id > request.id,
                    AuditRow.action == REVIEWED,
                )
                .order_by(AuditRow.id)
                .limit(1)
            )
            by = reviewer if reviewer is not None and row.action != REQUESTED else row
            return DecideOutcome(
                applied=False,
                outcome=_outcome(row.action, json.loads(row.detail or "{}")),
                decided_by=by.actor,
                decided_at=by.at,
            )

    def get(self, item_id: str) -> ReviewDetail:
        repo = self.deps.repo
        request = self._request(item_id)
        approval = _approval(request.detail)
        kind = approval.get("action", CANCEL)
        case = repo.get_case(request.case_id or "")
        waiting = self._is_waiting(request)
        item = ReviewItem(
            app=self.app,
            kind=kind,
            id=str(request.id),
            sort_id=request.id,
            title=_title(approval, case.case_id, case.vanpool_id),
            status=WAITING if waiting else DECIDED,
            created_at=request.at,
            summary=f"{case.case_id}, case {case.status}"
            + (f" ({case.outcome})" if case.outcome else ""),
        )
        pending: dict[str, Any] = {"action": kind, "case": case.case_id, "vanpool": case.vanpool_id}
        sections = []
        draft = None
        if kind == DRAFT:
            draft = repo.get_message(approval["message_id"])
            pending |= {"message": draft.message_id, "to": ", ".join(draft.recipients)}
            pending |= {"subject": draft.subject, "draft status": draft.status}
        else:
            pending["riders"] = ", ".join(approval.get("employee_ids") or []) or "none named"
            pending["run"] = (
                f"Case Manager agent, paused (thread {approval.get('thread_id')})"
                if approval.get("mode") == "agent"
                else "rules lifecycle"
            )
        sections.append(Section(title="The pending action", kind="fields", fields=pending))
        if draft is not None:
            sections.append(
                Section(
                    title=f"Drafted reply: {draft.subject}",
                    kind="lines",
                    lines=[[Span(line)] for line in draft.body.splitlines()] or [[Span("")]],
                )
            )
        sections += [self._thread_section(case), self._timeline_section(case)]
        detail = ReviewDetail(
            item=item,
            decision=self._decision(case),
            sections=sections,
            actions=[a for a in ("approve", "edit", "reject") if a in approval.get("allowed", [])]
            if waiting
            else [],
            action_labels=LABELS.get(kind, {}),
            edit_label="Email text" if kind == DRAFT else "",
            edit_value=draft.body if draft is not None else "",
        )
        first = None if waiting else self._first_decision(request)
        if first is None:
            return detail
        return replace(
            detail,
            decided_by=first.decided_by,
            decided_at=first.decided_at,
            outcome=first.outcome,
        )

    def _decision(self, case: CaseView) -> Decision:
        """The case's audit finding with the evidence the checks cited."""
        evidence = []
        for e in case.meta.get("evidence") or []:
            fields = {k: v for k, v in e.items() if k not in ("type", "ref")}
            summary = ", ".join(f"{k} {v}" for k, v in fields.items() if not isinstance(v, dict))
            evidence.append(
                Evidence(
                    source=str(e.get("type", "vanpool")),
                    ref=str(e.get("ref", "")),
                    summary=summary[:300],
                    fields=fields,
                )
            )
        result = case_result(case)
        return Decision(
            verdict=f"{case.meta.get('reason', 'unknown')} ({result.verdict})",
            confidence=result.confidence,
            reasoning=result.reasoning or "(no details recorded)",
            evidence=evidence,
        )

    def _thread_section(self, case: CaseView) -> Section:
        messages = self.deps.repo.messages(case.thread_id) if case.thread_id else []
        return Section(
            title="Email thread",
            kind="table",
            columns=["at", "direction", "status", "from", "subject", "text"],
            rows=[
                [
                    f"{(m.sent_at or m.created_at):%Y-%m-%d %H:%M}",
                    m.direction,
                    m.status + (f" ({m.bucket})" if m.bucket else ""),
                    m.sender,
                    m.subject,
                    m.body,
                ]
                for m in messages
            ],
        )

    def _timeline_section(self, case: CaseView) -> Section:
        return Section(
            title="Case timeline (audit log)",
            kind="table",
            columns=["at", "actor", "action", "detail"],
            rows=[
                [
                    f"{a['at']:%Y-%m-%d %H:%M}",
                    a["actor"],
                    a["action"],
                    json.dumps(a["detail"], default=str, ensure_ascii=False)[:400],
                ]
                for a in self.deps.repo.audit_log(case_id=case.case_id)
            ],
        )

    # ------------------------------------------------------------------ deciding
    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        deps = self.deps
        request = self._request(item_id)
        case_id = request.case_id or ""
        if not self._is_waiting(request):
            return self._first_or_gone(request)
        try:
            decide_approval(
                deps,
                case_id,
                action,
                edit if action == "edit" else None,
                actor=caller.name,
                config=self._config(caller),
            )
        except NotFoundError:
            # Lost a race: the other decision cleared the approval while this one started.
            return self._first_or_gone(request)
        # Who decided, in the log: a resumed agent run writes the effect rows under its name.
        deps.repo.audit(
            deps.now(),
            caller.name,
            REVIEWED,
            case_id=case_id,
            vanpool_id=request.vanpool_id,
            detail={"decision": action, "note": note, "request": request.id},
        )
        first = self._first_decision(request)
        if first is None:  # the decision ran, but left no row we know: report it as ours
            return DecideOutcome(True, action, caller.name, deps.now())
        mine = first.decided_by == caller.name
        return DecideOutcome(mine, first.outcome, first.decided_by, first.decided_at)

    def _first_or_gone(self, request: AuditRow) -> DecideOutcome:
        first = self._first_decision(request)
        if first is None:
            raise NotFoundError(
                f"Case {request.case_id} has no pending approval any more; reload the inbox."
            )
        return first

    # ------------------------------------------------------------------ live runs
    def run_fields(self) -> list[RunField]:
        return []

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        raise InputError("Vanpool audits start from `casework vanpool audit`, not from this page.")
