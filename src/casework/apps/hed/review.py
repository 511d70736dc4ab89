"""The hed app's review provider: annotations nobody was sure of, in the platform inbox.

An item is a stored annotation run whose verdict is not VALID (the cascade's "nobody sure"
ending, an invalid last attempt, or a faithfulness check that failed). The decision page shows
the description, the draft and what the validator said of it; a reviewer accepts a valid draft,
corrects it (the correction is validated against the run's schema before it is kept) or rejects
it, through ``service.decide_review``: a double press or a second reviewer changes nothing and
reads who decided first.

Its live runs take a BIDS pair uploaded in the UI (an events file, its sidecar optional) and
validate it, or write the sidecar's HED for the events file's categorical levels, as
``casework hed validate --sidecar/--events`` and ``hed annotate --events`` do.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from casework.apikit import DepsCache
from casework.apps.hed.deps import HedDeps, build_deps
from casework.apps.hed.models import (
    DEFAULT_SCHEMA,
    REVIEW_DECIDED,
    REVIEW_WAITING,
    StoredAnnotation,
)
from casework.apps.hed.service import (
    EventsAnnotation,
    annotate_events,
    check_events_annotation,
    decide_review,
    validate_dataset,
)
from casework.config import Settings
from casework.errors import InputError, NotFoundError
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
from casework.runtime.runconfig import RunConfig

__all__ = ["KIND", "HedReview"]

KIND = "unsure_annotation"
LABELS = {"approve": "Accept the draft", "edit": "Save the correction", "reject": "Reject"}


def _annotation_id(item_id: str) -> int:
    if not item_id.isdigit():
        raise NotFoundError(f"No hed review item {item_id!r}; open one from the inbox.")
    return int(item_id)


def _issues(result: dict, key: str) -> list[str]:
    return [str(x) for x in result.get(key) or []]


def _yes_no(value: Any) -> str:
    return "not checked" if value is None else "yes" if value else "no"


def _page(stored: StoredAnnotation) -> tuple[Decision, list[Section]]:
    """The decision and the sections an item's page shows: the description, the draft and
    what the validator said of it."""
    result = stored.result
    errors = _issues(result, "validation_errors_augmented") or _issues(result, "validation_errors")
    run = result.get("run") or {}
    decision = Decision(
        verdict=stored.verdict,
        confidence=float(result.get("confidence") or 0.0),
        reasoning=str(result.get("final_status") or result.get("reasoning") or ""),
        evidence=[
            Evidence(
                source="hed_annotations",
                ref=f"annotation {stored.id}",
                summary=f"{stored.strategy} on HED {stored.schema_version}"
                + (f", decided by the {run['decided_by']} layer" if run.get("decided_by") else ""),
                fields={"run_id": stored.run_id, "model": stored.model or ""},
            )
        ],
    )
    sections = [
        Section(
            title="Description",
            kind="lines",
            lines=[[Span(line)] for line in stored.description.splitlines()] or [[Span("")]],
        ),
        Section(
            title=f"Draft annotation (HED {stored.schema_version})",
            kind="fields",
            fields={
                "annotation": stored.annotation or "(none)",
                "valid": "yes" if result.get("is_valid") else "no",
                "faithful": _yes_no(result.get("is_faithful")),
            },
        ),
        Section(
            title="What the validator said",
            kind="table",
            columns=["kind", "message"],
            rows=[["error", e] for e in errors]
            + [["warning", w] for w in _issues(result, "validation_warnings")]
            or [["-", "no errors or warnings"]],
        ),
    ]
    return decision, sections


class HedReview:
    """``ReviewProvider`` over stored annotations that are not VALID; deps open on first use."""

    app = "hed"
    kinds = [KIND]
    statuses = [REVIEW_WAITING, REVIEW_DECIDED]

    def __init__(self, settings: Settings, *, deps: HedDeps | None = None) -> None:
        self.settings = settings
        self._deps = DepsCache(build_deps, None if deps is None else lambda: deps)

    @property
    def deps(self) -> HedDeps:
        return self._deps.get(self.settings)

    def _item(self, stored: StoredAnnotation) -> ReviewItem:
        draft = stored.annotation or "(no annotation)"
        return ReviewItem(
            app=self.app,
            kind=KIND,
            id=str(stored.id),
            sort_id=stored.id,
            title=f"Annotation {stored.id}: {stored.description[:80]}",
            status=stored.review_status or REVIEW_DECIDED,
            created_at=stored.created_at,
            summary=f"{stored.verdict}: {draft[:160]}",
        )

    def items(
        self, filters: ReviewFilters, *, limit: int, before: Cursor | None = None
    ) -> list[ReviewItem]:
        status = known_status(filters, self.statuses)
        rows = self.deps.repo.review_rows(status, filters, limit=limit, before=before)
        return [self._item(r) for r in rows]

    def count(self, filters: ReviewFilters) -> int:
        return int(self.deps.repo.count_review(known_status(filters, self.statuses), filters))

    def get(self, item_id: str) -> ReviewDetail:
        stored = self.deps.repo.annotation(_annotation_id(item_id))
        if stored is None or stored.review_status is None:
            raise NotFoundError(f"No hed review item {item_id!r}; open one from the inbox.")
        decision, sections = _page(stored)
        result = stored.result
        waiting = stored.review_status == REVIEW_WAITING
        actions: list[Action] = []
        if waiting:
            actions = (
                ["approve", "edit", "reject"] if result.get("is_valid") else ["edit", "reject"]
            )
        detail = ReviewDetail(
            item=self._item(stored),
            decision=decision,
            sections=sections,
            actions=actions,
            action_labels=LABELS,
            edit_label="Corrected HED annotation",
            edit_value=stored.annotation,
        )
        if waiting:
            return detail
        return replace(
            detail,
            actions=[],
            decided_by=stored.decided_by,
            decided_at=stored.decided_at,
            outcome=outcome_text(stored.review_outcome, stored.corrected_annotation),
        )

    def decide(
        self, item_id: str, action: Action, *, note: str, edit: str | None, caller: Caller
    ) -> DecideOutcome:
        return decide_review(
            self.deps, _annotation_id(item_id), action, edit=edit, note=note, actor=caller.name
        )

    # ------------------------------------------------------------------ live runs
    def run_fields(self) -> list[RunField]:
        """A BIDS pair uploaded from the UI: validated, or its sidecar's HED written."""
        return [
            RunField("mode", "What to do", default="validate", choices=list(MODES)),
            RunField("events", "Events file (events.tsv)", kind="file", accept=".tsv,.txt"),
            RunField(
                "sidecar", "Sidecar (events.json)", kind="file", accept=".json", optional=True
            ),
            RunField("strategy", "Annotate with", default="cascade", choices=["cascade", "rules"]),
        ]

    def start_run(self, params: dict[str, str], caller: Caller) -> Iterator[Event]:
        """Check the pair before anything starts (``InputError``), then validate it or
        annotate its categorical levels, yielding each level as it is decided."""
        mode = params.get("mode") or "validate"
        if mode not in MODES:
            raise InputError(f"Unknown mode {mode!r}; use one of: {', '.join(MODES)}.")
        events = Path(params["events"]) if params.get("events") else None
        sidecar = Path(params["sidecar"]) if params.get("sidecar") else None
        if mode == "validate":
            if events is None and sidecar is None:
                raise InputError("Choose an events file, a sidecar, or both, to validate.")
            return _validation_events(events, sidecar)
        if events is None:
            raise InputError("Choose the events file (events.tsv) whose levels to annotate.")
        strategy = params.get("strategy") or "cascade"
        out = events.parent / f"annotated-{events.stem}.json"
        check_events_annotation(
            events, out=out, sidecar=sidecar, schema=DEFAULT_SCHEMA, strategy=strategy
        )
        config = RunConfig.of(self.settings, caller=caller)
        return _annotation_events(
            lambda on_level: annotate_events(
                events,
                self.deps,
                config,
                sidecar=sidecar,
                schema=DEFAULT_SCHEMA,
                strategy=strategy,
                out=out,
                on_level=on_level,
            )
        )


MODES = ("validate", "annotate")


def _validation_events(events: Path | None, sidecar: Path | None) -> Iterator[Event]:
    names = " and ".join(p.name for p in (sidecar, events) if p is not None)
    yield {"type": "text", "text": f"Validating {names} as hedtools' BIDS validation does."}
    report = validate_dataset(sidecar=sidecar, events=events, schema=DEFAULT_SCHEMA)
    yield {"type": "validation", **report.to_dict()}
    yield {"type": "complete", "valid": report.valid, "items": []}


def _annotation_events(
    run: Callable[[Callable[[dict[str, Any]], None]], EventsAnnotation],
) -> Iterator[Event]:
    """The levels as the annotation decides them (it runs in a thread of its own and hands
    each level over a queue), then the sidecar and its validation."""
    handed: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        try:
            handed.put(("done", run(lambda item: handed.put(("level", item)))))
        except BaseException as exc:  # raised again in the run's own thread below
            handed.put(("error", exc))

    threading.Thread(target=work, name="hed-web-annotate", daemon=True).start()
    while True:
        kind, value = handed.get()
        if kind == "level":
            yield {"type": "level", **value}
        elif kind == "error":
            raise value
        else:
            result: EventsAnnotation = value
            data = result.to_dict() | {"out": None}  # a server path: not the reviewer's
            yield {"type": "sidecar", **data}
            yield {"type": "complete", "valid": result.out is not None, "items": []}
            return
