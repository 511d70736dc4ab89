"""What the app's faces (CLI, API, review inbox, demo, evaluation) call: import, seed and
index receipts, show a receipt and a word's history, validate a word's label with a strategy
(also as the runtime's events) and record the decision, the review queue and its decisions,
edge cases, and the harmoniser. The strategies themselves are in ``strategies``.

Orchestration over the repository, vectors, strategies, agent and harmoniser; no prompts, no
SQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path

from casework.apps.receipts.agent import agent_for, decision_from_run, render_task
from casework.apps.receipts.deps import ReceiptsDeps, build_deps
from casework.apps.receipts.harmonizer import HarmonizeReport, Outlier
from casework.apps.receipts.harmonizer import harmonize as harmonize_labels
from casework.apps.receipts.importer import parse_files
from casework.apps.receipts.labels import check_label, resolve_input
from casework.apps.receipts.memory import review_example
from casework.apps.receipts.models import (
    HUMAN,
    LABEL_DEFINITIONS,
    ROLES,
    EdgeCase,
    Label,
    LabelDecision,
    LabelInput,
    Receipt,
    ValidationStatus,
    WordRef,
)
from casework.apps.receipts.repository import LabelChange, WaitingLabel
from casework.apps.receipts.results import (
    ImportReport,
    ReceiptView,
    ReviewEntry,
    Validation,
    WordHistory,
    decision_json,
)
from casework.apps.receipts.strategies import STRATEGIES, LabelStrategy
from casework.apps.receipts.vectors import (
    VectorsUnavailable,
    index_receipts,
    indexed_ids,
    refresh_labels,
    word_doc_id,
)
from casework.config import Settings
from casework.errors import InputError, NotFoundError
from casework.registry import strategy_named
from casework.runtime.batch import BatchConfig, check_batch_config
from casework.runtime.cache import LookupCache
from casework.runtime.events import Event, to_json
from casework.runtime.harness import RunResult
from casework.runtime.review_provider import ReviewFilters
from casework.runtime.runconfig import RunConfig

__all__ = [
    "STRATEGIES",
    "add_edge_case",
    "bundled_receipt_files",
    "check_merchant",
    "edge_cases",
    "ensure_indexed",
    "harmonize",
    "import_files",
    "index",
    "record_result",
    "remove_edge_case",
    "review_decide",
    "review_edit",
    "review_entries",
    "review_example",
    "seed",
    "seed_review_queue",
    "show_receipt",
    "validate_word",
    "validation_events",
    "word_history",
]


def bundled_receipt_files() -> list[Path]:
    folder = files("casework.apps.receipts").joinpath("data").joinpath("receipts")
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".labels.json"))


def import_files(
    deps: ReceiptsDeps,
    paths: Sequence[Path],
    *,
    status: ValidationStatus = ValidationStatus.VALID,
    index: bool = True,
    rename: Mapping[str, str] | None = None,
) -> ImportReport:
    """Parse every file first (a bad one aborts before anything is written), write them all
    in one transaction, then embed the new words (idempotent upserts, after the commit).
    ``rename`` maps the files' label names to the taxonomy's; each new name must be one."""
    if not paths:
        raise InputError("Name at least one receipt file to import.")
    for old, new in (rename or {}).items():
        if new not in LABEL_DEFINITIONS:
            raise InputError(
                f"--map {old}={new}: {new} is not a label of the taxonomy "
                f"({', '.join(sorted(LABEL_DEFINITIONS))})."
            )
    parsed = parse_files(paths, rename)
    added, skipped = deps.repo.add_receipts(parsed, status=status)
    report = ImportReport(added=added, skipped=skipped)
    for rec in parsed:
        used = {w.label for line in rec.lines for w in line.words if w.label is not None}
        if unknown := sorted(used - LABEL_DEFINITIONS.keys()):
            report.unknown_labels[Path(rec.source).name] = unknown
    if index:
        try:
            report.indexed_words = (
                index_receipts(deps.repo, deps.vectors, added) if deps.vectors is not None else 0
            )
            if deps.vectors is None:
                report.vector_error = deps.vectors_error or "no vector store"
        except VectorsUnavailable as exc:
            report.vector_error = str(exc)
    return report


def ensure_indexed(deps: ReceiptsDeps, receipts: Sequence[Receipt] | None = None) -> int:
    """Index receipts whose words are missing from the vector store; returns words indexed."""
    if deps.vectors is None:
        raise VectorsUnavailable(deps.vectors_error or "no vector store")
    receipts = list(receipts) if receipts is not None else deps.repo.list_receipts()
    missing = []
    for r in receipts:
        words = deps.repo.words(r.id)
        ids = [word_doc_id(r.image_id, r.receipt_id, w.line_id, w.word_id) for w in words]
        if len(indexed_ids(deps.vectors, ids)) < len(ids):
            missing.append(r)
    return index_receipts(deps.repo, deps.vectors, missing) if missing else 0


def index(deps: ReceiptsDeps, *, everything: bool = False) -> int:
    """Embed the words of receipts missing from the vector store (every receipt's with
    ``everything``: repairs stale label metadata); the number of words embedded."""
    try:
        if everything:
            return index_receipts(deps.repo, deps.vectors, deps.repo.list_receipts())
        return ensure_indexed(deps)
    except VectorsUnavailable as exc:
        raise InputError(f"The vector store is unavailable: {exc}.") from exc


def seed(deps: ReceiptsDeps, *, index: bool = True) -> ImportReport:
    """Import the bundled receipts (idempotent) and make sure every receipt is indexed."""
    report = import_files(deps, bundled_receipt_files(), index=False)
    if index:
        try:
            report.indexed_words = ensure_indexed(deps)
        except VectorsUnavailable as exc:
            report.vector_error = str(exc)
    return report


def seed_review_queue(settings: Settings, items: int, *, days: float = 30.0) -> tuple[int, int]:
    """The bundled receipts (not embedded) and ``items`` labels waiting for review on their
    words, created over the last ``days`` with every tenth at the instant of the one before
    (ties the inbox's order must break). What the platform's API and inbox benchmarks serve,
    through ``registry.app_service``; returns (waiting items, the newest item's id)."""
    if items < 1:
        raise InputError("Queue at least one item for review.")
    deps = build_deps(settings, with_vectors=False)
    try:
        seed(deps, index=False)
        words = [w for r in deps.repo.list_receipts() for w in deps.repo.words(r.id)]
        now = datetime.now(UTC)
        step = days * 86400 / items
        newest = deps.repo.add_waiting_labels(
            [
                WaitingLabel(
                    word_pk=words[i % len(words)].id,
                    label_type="LINE_TOTAL",
                    proposed_by="bench",
                    reasoning=f"Seeded review item {i}.",
                    confidence=50.0 + i % 30,
                    created_at=now - timedelta(seconds=(i - (i % 10 == 9)) * step),
                )
                for i in range(items)
            ]
        )
        return deps.repo.count_inbox_labels(False, ReviewFilters()), newest
    finally:
        deps.repo.engine.dispose()


# ---------------------------------------------------------------------- receipts and words
def show_receipt(deps: ReceiptsDeps, receipt: str) -> ReceiptView:
    """A receipt (slug or key) with its words and their current labels."""
    r = deps.repo.resolve_receipt(receipt)
    labels: dict[int, list[str]] = {}
    for lab in deps.repo.current_labels(receipt_pk=r.id):
        mark = "" if lab.status == ValidationStatus.VALID else f"?{lab.status.value}"
        labels.setdefault(lab.word_pk, []).append(f"{lab.label_type}{mark}")
    return ReceiptView(receipt=r, words=deps.repo.words(r.id), labels=labels)


def word_history(deps: ReceiptsDeps, receipt: str, line_id: int, word_id: int) -> WordHistory:
    """The audit trail of one word."""
    r = deps.repo.resolve_receipt(receipt)
    word = deps.repo.get_word(r.id, line_id, word_id)
    return WordHistory(receipt=r, word=word, labels=deps.repo.labels_for_word(word.id))


# ---------------------------------------------------------------------- validating a word


def validate_word(
    deps: ReceiptsDeps,
    request: LabelInput,
    config: RunConfig,
    strategy: str = "cascade",
    *,
    record: bool = False,
    proposed_by: str = "cli",
) -> Validation:
    """Validate a suggested label for one word with a strategy by name, under ``config``; with
    ``record``, the decision is appended to the word's label history (refused before the model
    runs when the caller may not change the receipt's labels)."""
    run = strategy_named(STRATEGIES, strategy)
    ref = resolve_input(deps, request)
    if record:
        deps.repo.require_writable(deps.repo.get_receipt_by_key(ref.image_id, ref.receipt_id).id)
    result = run(request, deps, config)
    recorded = record_result(deps, ref, result, proposed_by=proposed_by) if record else []
    return Validation(ref=ref, result=result, recorded=recorded)


def validation_events(
    deps: ReceiptsDeps,
    request: LabelInput,
    config: RunConfig,
    strategy: str = "agent",
    *,
    proposed_by: str,
) -> Iterator[Event]:
    """Validate and record one word's label under ``config`` as the runtime's events: the
    agent's as they happen, while the other strategies run no agent and send nothing until
    the decision; last ``complete`` with the decision, how the run ended, and the NEEDS_REVIEW
    labels it recorded. The strategy and the word are checked before the first event."""
    run = strategy_named(STRATEGIES, strategy)
    ref = resolve_input(deps, request)
    if strategy != "agent":
        return _events_of(deps, ref, lambda: run(request, deps, config), proposed_by)
    return _agent_events(deps, ref, config, proposed_by)


def _events_of(
    deps: ReceiptsDeps, ref: WordRef, decide: Callable[[], LabelDecision], proposed_by: str
) -> Iterator[Event]:
    yield _complete(deps, ref, decide(), proposed_by)


def _agent_events(
    deps: ReceiptsDeps, ref: WordRef, config: RunConfig, proposed_by: str
) -> Iterator[Event]:
    """The agent strategy, streamed: the same agent, policy and calibration as
    ``strategies.agent``, but its events reach the caller while it runs."""
    run: RunResult[LabelDecision] | None = None
    for event in agent_for(deps, config).iter_events(render_task(ref), context=ref):
        if event["type"] == "complete":  # ours comes last, after the label is recorded
            run = event["result"]
        else:
            yield to_json(event)
    assert run is not None  # iter_events always ends with complete
    name = config.models.name(ROLES["agent"])
    calibration = deps.calibration("agent", name) if deps.calibration else None
    result = decision_from_run(run, model=name, calibration=calibration)
    yield _complete(deps, ref, result, proposed_by)


def _complete(deps: ReceiptsDeps, ref: WordRef, result: LabelDecision, proposed_by: str) -> Event:
    labels = record_result(deps, ref, result, proposed_by=proposed_by)
    run = result.run
    return {
        "type": "complete",
        "result": decision_json(ref, result),
        "ended_by": run.ended_by.value if run is not None else None,
        "usage": run.usage.to_dict() if run is not None else {},
        "items": [str(x.id) for x in labels if x.status == ValidationStatus.NEEDS_REVIEW],
    }


# ---------------------------------------------------------------------- recording and review
def _current_label(deps: ReceiptsDeps, word_pk: int, label_type: str) -> Label | None:
    current = [
        lab
        for lab in deps.repo.labels_for_word(word_pk)
        if lab.current and lab.label_type == label_type
    ]
    return current[-1] if current else None


def record_result(
    deps: ReceiptsDeps, ref: WordRef, result: LabelDecision, *, proposed_by: str = "cli"
) -> list[Label]:
    """Append the validation as a label row (the audit trail). A decision on a label the word
    already has supersedes that label; otherwise it is a new label proposed by ``proposed_by``."""
    r = deps.repo.get_receipt_by_key(ref.image_id, ref.receipt_id)
    word = deps.repo.get_word(r.id, ref.line_id, ref.word_id)
    existing = _current_label(deps, word.id, ref.suggested_label)
    run = result.run
    strategy = run.strategy if run is not None and run.strategy else "unknown"
    who = f"{strategy}:{run.model}" if run is not None and run.model else strategy
    labels = deps.repo.append_labels(
        [
            LabelChange(
                word_pk=word.id,
                label_type=ref.suggested_label,
                status=ValidationStatus(result.verdict),
                proposed_by=existing.proposed_by if existing else proposed_by,
                reasoning=result.reasoning,
                confidence=result.confidence,
                validated_by=who,
                replaces_id=existing.id if existing else None,
            )
        ]
    )
    refresh_labels(deps.repo, deps.vectors, r.id, {word.id})
    return labels


def review_decide(
    deps: ReceiptsDeps, label_id: int, *, accept: bool, reviewer: str = "reviewer", note: str = ""
) -> list[Label]:
    """Accept or reject a NEEDS_REVIEW label; writes the decision as new rows.

    Accept: the label becomes VALID (a new row replacing the review row); when it was a
    suggested replacement, the label it would replace is marked INVALID. Reject: the label
    becomes INVALID; the label it would have replaced stays as it is.
    """
    label = deps.repo.get_label(label_id)
    if not label.current:
        raise InputError(
            f"Label {label_id} was already reviewed or replaced; `casework receipts review` lists the open items."
        )
    if label.status != ValidationStatus.NEEDS_REVIEW:
        raise InputError(f"Label {label_id} is {label.status.value}, not waiting for review.")
    who = f"{HUMAN}{reviewer}"
    verdict = "accepted" if accept else "rejected"
    changes = [
        LabelChange(
            word_pk=label.word_pk,
            label_type=label.label_type,
            status=ValidationStatus.VALID if accept else ValidationStatus.INVALID,
            proposed_by=label.proposed_by,
            reasoning=note or f"Review {verdict} by {reviewer}.",
            confidence=100.0,
            validated_by=who,
            replaces_id=label.id,
            consolidated_from_id=label.consolidated_from_id,
        )
    ]
    if accept:
        changes += _replaced(deps, label, label.label_type, f"accepted by {reviewer}", who)
    rows = deps.repo.append_labels(changes)
    refresh_labels(deps.repo, deps.vectors, label.receipt_pk, {label.word_pk})
    return rows


def _replaced(
    deps: ReceiptsDeps, label: Label, new_type: str, how: str, who: str
) -> list[LabelChange]:
    """The INVALID row for the label a reviewed suggestion replaces, when it is still current
    and of another type than the one the review settled on."""
    if not label.consolidated_from_id:
        return []
    old = deps.repo.get_label(label.consolidated_from_id)
    if not old.current or old.label_type == new_type:
        return []
    why = f"Replaced by {new_type} (review of label {label.id} {how})."
    return [LabelChange.retiring(old, why, confidence=100.0, validated_by=who)]


def review_edit(
    deps: ReceiptsDeps, label_id: int, new_type: str, *, reviewer: str, note: str = ""
) -> list[Label]:
    """Accept a NEEDS_REVIEW label's word under another label type ``new_type``: the review
    row is replaced by a VALID label of that type, and the label the suggestion would have
    replaced is marked INVALID (one transaction). The same type is a plain accept."""
    label = deps.repo.get_label(label_id)
    new_type = check_label(deps, new_type)
    if new_type == label.label_type:
        return review_decide(deps, label.id, accept=True, reviewer=reviewer, note=note)
    who = f"{HUMAN}{reviewer}"
    changes = [
        LabelChange(
            word_pk=label.word_pk,
            label_type=new_type,
            status=ValidationStatus.VALID,
            proposed_by=label.proposed_by,
            reasoning=note or f"Review edited {label.label_type} to {new_type} by {reviewer}.",
            confidence=100.0,
            validated_by=who,
            replaces_id=label.id,
            consolidated_from_id=label.consolidated_from_id or label.id,
        )
    ]
    changes += _replaced(deps, label, new_type, f"edited by {reviewer}", who)
    rows = deps.repo.append_labels(changes)
    refresh_labels(deps.repo, deps.vectors, label.receipt_pk, {label.word_pk})
    return rows


def review_entries(
    deps: ReceiptsDeps, *, merchant: str | None = None, limit: int = 100
) -> list[ReviewEntry]:
    """The NEEDS_REVIEW queue (oldest first), with each label's receipt and what it replaces."""
    queue = deps.repo.review_queue(merchant=merchant, limit=limit)
    slugs = deps.repo.slugs()
    replaced = deps.repo.label_types(
        lab.consolidated_from_id for lab in queue if lab.consolidated_from_id
    )
    return [
        ReviewEntry(
            label=lab,
            receipt=slugs.get(lab.receipt_pk, ""),
            instead_of=replaced.get(lab.consolidated_from_id or 0),
        )
        for lab in queue
    ]


# ---------------------------------------------------------------------- edge cases
def edge_cases(deps: ReceiptsDeps, label: str | None = None) -> list[EdgeCase]:
    """The active known invalid patterns, of one label type when ``label`` names one."""
    return deps.repo.edge_cases(check_label(deps, label) if label else None)


def add_edge_case(
    deps: ReceiptsDeps, label: str, pattern: str, reason: str, *, merchant: str | None = None
) -> EdgeCase:
    """A known invalid pattern: words matching ``pattern`` can't carry ``label``."""
    return deps.repo.add_edge_case(label.upper(), pattern, reason, merchant=merchant)


def remove_edge_case(deps: ReceiptsDeps, edge_case_id: int) -> EdgeCase:
    """Switch a known invalid pattern off (kept for the record)."""
    return deps.repo.deactivate_edge_case(edge_case_id)


# ---------------------------------------------------------------------- harmonising
def check_merchant(deps: ReceiptsDeps, merchant: str | None) -> None:
    """Refuse a merchant no receipt has (any case), naming the known ones."""
    if merchant and merchant.lower() not in {m.lower() for m in deps.repo.merchants()}:
        raise NotFoundError(
            f"No receipts of merchant {merchant!r}; known merchants: {', '.join(deps.repo.merchants())}."
        )


def harmonize(
    deps: ReceiptsDeps,
    strategy: str = "baseline",
    *,
    merchant: str | None = None,
    dry_run: bool = False,
    concurrency: int = 2,
    executor: str = "local",
    address: str | None = None,
    config: RunConfig | None = None,
    limit: int | None = None,
    on_found: Callable[[int], None] | None = None,
    on_done: Callable[[Outlier, LabelDecision | None], None] | None = None,
) -> HarmonizeReport:
    """Find outlier labels, validate a replacement for each with a strategy by name under
    ``config`` (default: the settings' models; through the batch seam: ``executor`` local or
    ray at ``address``, where each worker opens the stores itself), and apply the fixes by
    confidence (plan only: ``dry_run``)."""
    run: LabelStrategy = strategy_named(STRATEGIES, strategy)
    check_batch_config(BatchConfig(executor=executor, address=address, concurrency=concurrency))
    check_merchant(deps, merchant)
    return asyncio.run(
        harmonize_labels(
            deps.with_cache(LookupCache()),
            strategy,
            run,
            config,
            open_deps=build_deps,
            merchant=merchant,
            dry_run=dry_run,
            concurrency=concurrency,
            executor=executor,
            address=address,
            limit=limit,
            on_found=on_found,
            on_done=on_done,
        )
    )
