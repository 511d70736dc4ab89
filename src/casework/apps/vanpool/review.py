"""The vanpool app's review provider: pending approvals in the platform inbox.

An item is one ``approval_requested`` row of the case audit log: a ``cancel_membership``
(rules lifecycle or the Case Manager's paused run, both recorded with the case) or a
``send_email_for_review`` draft. It waits while its case still waits on it (the case is in
``hitl_review`` / ``pre_cancel`` and no later request replaced it); afterwards the first
decision row after it in the log says who settled it and how.

Deciding goes through ``service.decide_approval_request``, which runs
``service.decide_approval`` (the call behind `casework vanpool approve|edit|reject`): its
effects run behind the side-effect journal, so a double press or two reviewers cancel a
membership or send a reply once, and the second one reads who was first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from casework.apikit import DepsCache
from casework.apps.vanpool.deps import VanpoolDeps, build_deps
from casework.apps.vanpool.models import Bucket, CaseView
from casework.apps.vanpool.service import (
    case_result,
    decide_approval_request,
    settled_approval,
)
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.llm.roles import RoleModels
from casework.runtime.context import Caller
from casework.runtime.decision import Decision, Evidence
from casework.runtime.events import Event
from casework.runtime.memory import ExampleDraft
from casework.runtime.review_provider import (
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
    known_status,
)
from casework.runtime.runconfig import RunConfig

__all__ = ["CANCEL", "DECIDED", "DRAFT", "VanpoolReview"]

CANCEL = "cancel_membership"
DRAFT = "send_email_for_review"
DECIDED = "decided"
LABELS = {
    CANCEL: {"approve": "Approve: cancel the membership", "reject": "Reject: keep the riders"},
    DRAFT: {
        "approve": "Approve: send the draft",
        "edit": "Send the edited text",
        "reject": "Reject: do not send",
    },
}


def _request_id(item_id: str) -> int:
    if not item_id.isdigit():
        raise NotFoundError(f"No vanpool review item {item_id!r}; open one from the inbox.")
    return int(item_id)


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
        self._deps = DepsCache(build_deps, None if deps is None else lambda: deps)
        self._models = models
        """The models a resumed agent run gets instead of the settings' (tests: scripted)."""

    @property
    def deps(self) -> VanpoolDeps:
        return self._deps.get(self.settings)

    def _config(self, caller: Caller) -> RunConfig:
        config = RunConfig.of(self.deps.settings, caller=caller)
        return replace(config, models=self._models) if self._models is not None else config

    # ------------------------------------------------------------------ listing
    def _waiting(self, filters: ReviewFilters) -> bool:
        return known_status(filters, self.statuses) == WAITING

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        requests = self.deps.repo.approval_requests(
            self._waiting(filters), filters, limit=limit, before=before
        )
        items = []
        for r in requests:
            kind = r.approval.get("action", CANCEL)
            if kind == DRAFT:
                summary = f"{r.case_id}: {r.draft_body[:160]}"
            else:
                summary = f"{r.case_id}, after {r.approval.get('mode', 'rules')} review"
            items.append(
                ReviewItem(
                    app=self.app,
                    kind=kind,
                    id=str(r.id),
                    sort_id=r.id,
                    title=_title(r.approval, r.case_id, r.vanpool_id),
                    status=filters.status,
                    created_at=r.at,
                    summary=summary,
                )
            )
        return items

    def count(self, filters: ReviewFilters) -> int:
        return self.deps.repo.count_approval_requests(self._waiting(filters), filters)

    # ------------------------------------------------------------------ one item
    def get(self, item_id: str) -> ReviewDetail:
        repo = self.deps.repo
        request = repo.approval_request(_request_id(item_id))
        approval = request.approval
        kind = approval.get("action", CANCEL)
        case = repo.get_case(request.case_id)
        waiting = repo.approval_waiting(request.id)
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
        first = None if waiting else settled_approval(self.deps, request)
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
            columns=["at", "actor", "action", "caller", "detail"],
            rows=[
                [
                    f"{a['at']:%Y-%m-%d %H:%M}",
                    a["actor"],
                    a["action"],
                    a["caller"] or "(not recorded)",
                    json.dumps(a["detail"], default=str, ensure_ascii=False)[:400],
                ]
                for a in self.deps.repo.audit_log(case_id=case.case_id)
            ],
        )

    # ------------------------------------------------------------------ deciding
    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        request_id = _request_id(item_id)
        outcome = decide_approval_request(
            self.deps,
            request_id,
            action,
            body=edit if action == "edit" else None,
            note=note,
            actor=caller.name,
            config=self._config(caller),
        )
        if not outcome.applied or action == "reject":
            return outcome
        return replace(outcome, example=self._verified_reply(request_id))

    def _verified_reply(self, request_id: int) -> ExampleDraft | None:
        """A draft answers a reply the cascade sent to a person as an escalation: a reviewer
        who sends it (as drafted or edited) verifies that bucket for the rider's reply, the
        last inbound message before the draft. A rejected draft verifies nothing."""
        repo = self.deps.repo
        approval = repo.approval_request(request_id).approval
        if approval.get("action") != DRAFT:
            return None
        draft = repo.get_message(approval["message_id"])
        inbound = []
        for m in repo.messages(draft.thread_id):  # in the order they were filed
            if m.message_id == draft.message_id:
                break
            if m.direction == "inbound" and m.body.strip():
                inbound.append(m)
        if not inbound:
            return None
        return ExampleDraft(
            inputs={"reply": inbound[-1].body}, answer={"bucket": Bucket.ESCALATION.value}
        )

    # ------------------------------------------------------------------ live runs
    def run_fields(self) -> list[RunField]:
        return []

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        raise InputError("Vanpool audits start from `casework vanpool audit`, not from this page.")
