"""The sql app's review provider: answers nobody was sure of, in the platform inbox.

An item is a question whose answer was NEEDS_REVIEW (kept by ``service.ask``). The decision
page shows the question, the draft query with the validator's verdict, and the rows the draft
yields when run read-only; a reviewer accepts the draft, corrects the query (it must run
read-only on the question's database before it is kept) or rejects it, through
``service.decide_review``: a repeat changes nothing and reads who decided first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from casework.apps.sql.models import REVIEW_DECIDED, REVIEW_WAITING, StoredAnswer
from casework.apps.sql.service import check_query, decide_review, deps_of_answer, open_answers
from casework.config import Settings
from casework.errors import CaseworkError, InputError, NotFoundError
from casework.runtime.context import Caller
from casework.runtime.decision import Decision, Evidence
from casework.runtime.events import Event
from casework.runtime.review_provider import (
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
    outcome_text,
)

__all__ = ["KIND", "SqlReview"]

KIND = "unsure_answer"
LABELS = {
    "approve": "Accept the draft query",
    "edit": "Save the corrected query",
    "reject": "Reject",
}
SHOWN_ROWS = 20


def _answer_id(item_id: str) -> int:
    if not item_id.isdigit():
        raise NotFoundError(f"No sql review item {item_id!r}; open one from the inbox.")
    return int(item_id)


class SqlReview:
    """``ReviewProvider`` over the answers kept for review."""

    app = "sql"
    kinds = [KIND]
    statuses = [REVIEW_WAITING, REVIEW_DECIDED]

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _item(self, stored: StoredAnswer) -> ReviewItem:
        return ReviewItem(
            app=self.app,
            kind=KIND,
            id=str(stored.id),
            sort_id=stored.id,
            title=f"Question {stored.id}: {stored.question[:80]}",
            status=stored.review_status,
            created_at=stored.created_at,
            summary=f"on {stored.schema_name}: {(stored.query or '(no query)')[:160]}",
        )

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        status = known_status(filters, self.statuses)
        rows = open_answers(self.settings).review_rows(status, filters, limit=limit, before=before)
        return [self._item(r) for r in rows]

    def count(self, filters: ReviewFilters) -> int:
        status = known_status(filters, self.statuses)
        return open_answers(self.settings).count_review(status, filters)

    def _rows_section(self, stored: StoredAnswer, query: str | None) -> Section:
        title = "Rows of the draft query (read-only, first 20)"
        if not query:
            return Section(title=title, kind="table", columns=["-"], rows=[["no query"]])
        try:
            result = check_query(deps_of_answer(self.settings, stored), query)
        except CaseworkError as exc:
            return Section(title=title, kind="table", columns=["error"], rows=[[str(exc)]])
        if result is None:
            return Section(
                title=title, kind="table", columns=["-"], rows=[["no database to run on"]]
            )
        return Section(
            title=title, kind="table", columns=result.columns, rows=result.rows[:SHOWN_ROWS]
        )

    def get(self, item_id: str) -> ReviewDetail:
        stored = open_answers(self.settings).answer(_answer_id(item_id))
        if stored is None:
            raise NotFoundError(f"No sql review item {item_id!r}; open one from the inbox.")
        response = stored.response
        errors = [
            f"{e.get('code', '')}: {e.get('message', '')}"
            for e in response.get("validation_errors") or []
        ]
        decision = Decision(
            verdict=stored.verdict,
            confidence=float(response.get("confidence") or 0.0),
            reasoning=str(response.get("explanation") or response.get("end_detail") or ""),
            evidence=[
                Evidence(
                    source="sql_answers",
                    ref=f"answer {stored.id}",
                    summary=f"asked by {stored.asked_by or 'unknown'} of schema "
                    f"{stored.schema_name}, strategy {response.get('strategy', '')}",
                    fields={"model": response.get("model") or ""},
                )
            ],
        )
        waiting = stored.review_status == REVIEW_WAITING
        sections = [
            Section(title="Question", kind="lines", lines=[[Span(stored.question)]]),
            Section(
                title="Draft query",
                kind="fields",
                fields={
                    "query": stored.query or "(none)",
                    "valid": "yes" if response.get("valid") else "no",
                    "errors": "; ".join(errors) or "none",
                },
            ),
            self._rows_section(stored, stored.query),
        ]
        actions: list[Action] = []
        if waiting:
            actions = ["approve", "edit", "reject"] if response.get("valid") else ["edit", "reject"]
        detail = ReviewDetail(
            item=self._item(stored),
            decision=decision,
            sections=sections,
            actions=actions,
            action_labels=LABELS,
            edit_label="Corrected SQL",
            edit_value=stored.query or "",
        )
        if waiting:
            return detail
        return replace(
            detail,
            actions=[],
            decided_by=stored.decided_by,
            decided_at=stored.decided_at,
            outcome=outcome_text(stored.review_outcome, stored.corrected_query),
        )

    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        return decide_review(
            self.settings, _answer_id(item_id), action, edit=edit, note=note, actor=caller.name
        )

    def run_fields(self) -> list[RunField]:
        return []

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        raise InputError("Questions start from `casework sql ask`, not this page.")
