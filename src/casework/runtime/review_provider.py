"""The review seam: how an app offers the things waiting for a person to the platform's inbox.

An app's ``AppSpec.review(settings)`` returns a ``ReviewProvider``. The web UI (and any other
face) lists ``ReviewItem`` rows across apps, opens one as a ``ReviewDetail`` and settles it with
``decide``; it never imports the app. Items are paged by keyset (``Cursor``), newest first, so
a deep page costs as much as the first one however many items wait.

A provider may also offer live runs (``run_fields`` + ``start_run``): the UI starts one and
follows the JSON-safe runtime events it yields (``casework.runtime.events``), the last one a
``complete`` event whose ``items`` name the review items the run produced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from sqlalchemy import and_, or_

from casework.errors import InputError
from casework.runtime.context import Caller
from casework.runtime.decision import Decision, ToolCallRecord
from casework.runtime.events import Event
from casework.runtime.memory import ExampleDraft

__all__ = [
    "OUTCOME_OF",
    "WAITING",
    "Action",
    "Cursor",
    "DecideOutcome",
    "ReviewDetail",
    "ReviewFilters",
    "ReviewItem",
    "ReviewProvider",
    "RunField",
    "Section",
    "Span",
    "age_window",
    "keyset_before",
    "known_status",
    "outcome_of",
    "outcome_text",
    "settle_once",
]

Action = Literal["approve", "edit", "reject"]
WAITING = "waiting"
"""The status of an item nobody has decided yet; providers may name other statuses."""
OUTCOME_OF: dict[str, str] = {"approve": "accepted", "edit": "corrected", "reject": "rejected"}
"""What a reviewer's action makes of a draft, as a settled item records it."""


def outcome_text(outcome: str | None, corrected: str | None) -> str:
    """How a settled draft reads: ``corrected to <the correction>``, else its outcome."""
    return f"corrected to {corrected}" if outcome == "corrected" and corrected else outcome or ""


@dataclass(frozen=True)
class ReviewItem:
    """One row of the inbox."""

    app: str
    kind: str
    """What sort of thing waits, e.g. ``needs_review_label``, ``approval``, ``failed_extraction``."""
    id: str
    """The provider's id, opaque to the platform (URL-safe)."""
    sort_id: int
    """A number that orders items of one app created at the same instant (keyset paging)."""
    title: str
    status: str
    created_at: datetime
    summary: str = ""
    link: str = ""
    """Where the app shows it (filled by the UI when empty)."""


@dataclass(frozen=True)
class Cursor:
    """Keyset position: items strictly older than (created_at, sort_id). ``sort_id=None`` keeps
    every item at ``created_at`` itself (the UI orders apps by name within one instant)."""

    created_at: datetime
    sort_id: int | None


@dataclass(frozen=True)
class ReviewFilters:
    status: str = WAITING
    created_after: datetime | None = None
    created_before: datetime | None = None


def known_status(filters: ReviewFilters, statuses: Sequence[str]) -> str:
    """The filter's status, or one sentence naming the statuses the provider knows."""
    if filters.status not in statuses:
        raise InputError(f"Unknown status {filters.status!r}; use one of: {', '.join(statuses)}.")
    return filters.status


def age_window(at: Any, filters: ReviewFilters) -> list[Any]:
    """SQL predicates for the filters' age bounds on a provider's time column ``at``."""
    where: list[Any] = []
    if filters.created_after is not None:
        where.append(at >= filters.created_after)
    if filters.created_before is not None:
        where.append(at < filters.created_before)
    return where


def keyset_before(at: Any, id_: Any, before: Cursor | None) -> list[Any]:
    """SQL predicates for the page after ``before`` of items ordered by (``at``, ``id_``),
    newest first."""
    if before is None:
        return []
    if before.sort_id is None:
        return [at <= before.created_at]
    return [or_(at < before.created_at, and_(at == before.created_at, id_ < before.sort_id))]


@dataclass(frozen=True)
class Span:
    text: str
    highlight: bool = False


@dataclass(frozen=True)
class Section:
    """A block of the decision page the app fills: ``lines`` (text with highlighted spans, e.g.
    the receipt with the word marked), ``table`` (columns + rows) or ``fields`` (name: value)."""

    title: str
    kind: Literal["lines", "table", "fields"]
    lines: list[list[Span]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReviewDetail:
    """Everything the decision page shows for one item."""

    item: ReviewItem
    decision: Decision | None
    trajectory: list[ToolCallRecord] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    """What a reviewer may do now (empty once decided)."""
    action_labels: dict[str, str] = field(default_factory=dict)
    """Button text per action when the plain verb would mislead, e.g. approve: 'Retry'."""
    edit_label: str = ""
    """For ``edit``: what the field holds, e.g. 'Label'."""
    edit_value: str = ""
    edit_choices: list[str] = field(default_factory=list)
    """For ``edit``: the values to pick from; empty: free text (e.g. an email to rewrite)."""
    decided_by: str | None = None
    decided_at: datetime | None = None
    outcome: str | None = None
    """How it was settled, e.g. 'accepted', 'rejected', 'edited to TAX'."""


@dataclass(frozen=True)
class DecideOutcome:
    """``applied`` False: somebody decided first; ``decided_by``/``outcome`` say who and how."""

    applied: bool
    outcome: str
    decided_by: str
    decided_at: datetime | None = None
    example: ExampleDraft | None = None
    """The answer the decision verified (the case input and its answer), when it verified
    one: the platform stores it as an example of the app, the decider as ``verified_by``
    (``casework.examples.learn_from_review``)."""


def outcome_of(action: str) -> str:
    """What a reviewer's action makes of a draft (``OUTCOME_OF``), or one sentence."""
    if action not in OUTCOME_OF:
        raise InputError(f"Unknown action {action!r}; use approve, edit or reject.")
    return OUTCOME_OF[action]


def settle_once(
    applied: bool,
    again: Any,
    settled: Callable[[Any], DecideOutcome],
    *,
    outcome: str,
    corrected: str | None,
    draft: str | None,
    actor: str,
    example_of: Callable[[str], ExampleDraft],
) -> DecideOutcome:
    """The answer to a decision that tried to settle a stored draft once (``applied``: it
    did; ``again``: the item read back). Another reviewer first: their decision
    (``settled(again)``); else this one, with the answer it verified (the correction, or the
    accepted ``draft``) as ``example_of`` makes it an example of the app."""
    if not applied and again is not None:
        return settled(again)
    verified = corrected or (draft if outcome == "accepted" else None)
    return DecideOutcome(
        applied=True,
        outcome=outcome_text(outcome, corrected),
        decided_by=actor,
        decided_at=again.decided_at if again is not None else None,
        example=None if verified is None else example_of(verified),
    )


@dataclass(frozen=True)
class RunField:
    """One input of a provider's run form."""

    name: str
    label: str
    default: str = ""
    choices: list[str] = field(default_factory=list)
    kind: Literal["text", "file"] = "text"
    """``file``: the UI uploads a file and hands ``start_run`` the path it was saved under."""
    accept: str = ""
    """For ``file``: the suffixes offered, e.g. ``.tsv``."""
    optional: bool = False
    """For ``file``: the run may start without one (its param is then ``""``)."""


@runtime_checkable
class ReviewProvider(Protocol):
    app: str
    kinds: list[str]
    statuses: list[str]
    """Statuses ``ReviewFilters.status`` may name; the first is the waiting one."""

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        """Newest first, at most ``limit``, strictly after ``before`` in that order."""
        ...

    def count(self, filters: ReviewFilters) -> int: ...

    def get(self, item_id: str) -> ReviewDetail:
        """The item; ``NotFoundError`` for an unknown id."""
        ...

    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        """Apply the decision once; a repeat (double click, second reviewer) changes nothing
        and answers who decided first. ``InputError`` for an action the item does not allow."""
        ...

    def run_fields(self) -> list[RunField]:
        """The inputs of a live run this app can start from the UI (empty: none)."""
        ...

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        """Validate ``params`` (``InputError`` before anything starts), then run, yielding
        JSON-safe events; the last is ``complete`` with ``items``: the item ids it produced."""
        ...
