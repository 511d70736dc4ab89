"""Recorded runs (extractions and corrections): started, followed event by event, and
closed when their process died, which opening the deps does first (``build_deps``).

A run is recorded event by event in ``documents_run_events`` (the spec's flat events plus a
sequence number) and runs in its own thread, so it goes on when no client listens and a
client that disconnects re-reads from ``Last-Event-ID``."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from casework.apps.documents.agent import finish_extraction, run_correction
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import ExtractionDecision, ExtractionInput
from casework.apps.documents.ocr import OcrProvider
from casework.apps.documents.recording import RunHandle, start_run
from casework.apps.documents.repository import DocumentsRepository
from casework.apps.documents.service.files import ocr_engine
from casework.apps.documents.strategies import STRATEGIES
from casework.config import Settings, get_settings
from casework.errors import InputError
from casework.registry import strategy_named
from casework.runtime.context import Caller
from casework.runtime.runconfig import RunConfig
from casework.stores import open_stores

__all__ = [
    "STALE_AFTER",
    "build_deps",
    "follow_run",
    "recorded_config",
    "recover_stale_runs",
    "start_correction",
    "start_extraction",
]


def _extraction_complete(decision: ExtractionDecision) -> dict[str, Any]:
    usage = decision.run.usage if decision.run else None
    return {
        "complete": True,
        "extraction_id": decision.extraction_id,
        "cost": (usage.cost_usd or 0.0) if usage is not None else 0.0,
        "status": decision.verdict,
    }


def start_extraction(
    deps: DocumentsDeps,
    caller: Caller,
    document_id: int,
    *,
    fields: list[str] | None = None,
    strategy: str = "cascade",
    config: RunConfig | None = None,
    background: bool = True,
) -> RunHandle:
    """The spec's order: create the extraction row, then run the strategy on it, under
    ``config`` (default: the settings' models) with the run's events recorded."""

    run = strategy_named(STRATEGIES, strategy)  # refused before the extraction row is created
    ext = deps.repo.create_extraction(caller.user_id, document_id, requested=fields)
    input = ExtractionInput(
        document_id=document_id, user_id=caller.user_id, fields=fields, extraction_id=ext.id
    )

    def work(emit: Callable[[dict[str, Any]], None]) -> ExtractionDecision:
        try:
            decision = run(input, deps, recorded_config(deps, config, emit, caller))
            assert isinstance(decision, ExtractionDecision)
            return decision
        finally:
            _never_in_progress(deps, caller.user_id, ext.id)

    return start_run(
        deps.repo,
        caller.user_id,
        "extract",
        work,
        complete=_extraction_complete,
        extraction_id=ext.id,
        background=background,
    )


def start_correction(
    deps: DocumentsDeps,
    caller: Caller,
    extraction_id: int,
    instruction: str,
    *,
    config: RunConfig | None = None,
    background: bool = True,
) -> RunHandle:

    deps.repo.get_extraction(caller.user_id, extraction_id)  # 404 before a run exists
    if not instruction.strip():
        raise InputError('Say what to correct, e.g. "the total is 45.10".')

    def work(emit: Callable[[dict[str, Any]], None]) -> ExtractionDecision:
        try:
            return run_correction(
                deps,
                caller.user_id,
                extraction_id,
                instruction,
                recorded_config(deps, config, emit, caller),
            )
        finally:
            _never_in_progress(deps, caller.user_id, extraction_id)

    return start_run(
        deps.repo,
        caller.user_id,
        "correct",
        work,
        complete=_extraction_complete,
        extraction_id=extraction_id,
        background=background,
    )


def recorded_config(
    deps: DocumentsDeps,
    config: RunConfig | None,
    emit: Callable[[dict[str, Any]], None],
    caller: Caller,
) -> RunConfig:
    """The run's config with its events going to the run's record, for ``caller``."""
    base = config or RunConfig.of(deps.settings)
    return dataclasses.replace(base, events=emit, caller=caller)


def _never_in_progress(deps: DocumentsDeps, user_id: int, extraction_id: int) -> None:
    """Whatever happened (even a bug), the extraction ends in a final state."""
    ext = deps.repo.get_extraction(user_id, extraction_id)
    if ext.status == "in_progress":
        finish_extraction(deps, user_id, extraction_id, "error", fallback=False)


STALE_AFTER = timedelta(minutes=30)
"""Twice the agent's time budget: a run still ``running`` after this lost its process."""


def recover_stale_runs(deps: DocumentsDeps, *, now: datetime | None = None) -> list[str]:
    """Close runs whose process died: their extraction keeps what it wrote and ends completed
    (``complete_extraction``'s check) or failed with the reason; the stream gets its complete event."""

    cutoff = (now or datetime.now(UTC)) - STALE_AFTER
    closed = []
    for run_id, owner, ext_id, last_seq in deps.repo.stale_runs(cutoff):
        final: dict[str, Any] = {
            "complete": True,
            "error": "the run's process ended before it finished",
        }
        if ext_id is not None:
            finish_extraction(deps, owner, ext_id, "interrupted (process ended)", fallback=False)
            ext = deps.repo.get_extraction(owner, ext_id)
            final |= {"extraction_id": ext_id, "status": ext.status, "cost": 0.0}
        deps.repo.append_event(run_id, last_seq + 1, final)
        deps.repo.finish_run(run_id, 0.0)
        closed.append(run_id)
    # runs started without a run row (strategies called directly: evaluation, scripts)
    for owner, ext_id in deps.repo.stale_extractions(cutoff):
        finish_extraction(deps, owner, ext_id, "interrupted (process ended)", fallback=False)
        closed.append(f"extraction:{ext_id}")
    return closed


def follow_run(
    deps: DocumentsDeps,
    user_id: int,
    run_id: str,
    *,
    after: int = 0,
    poll: float = 0.2,
    timeout: float | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every event after ``after`` (Last-Event-ID), as they are written, until the run is done."""
    started = time.monotonic()
    while True:
        events, done = deps.repo.events_after(user_id, run_id, after)
        for seq, data in events:
            after = seq
            yield seq, data
        if done and not events:
            return
        if not events:
            if timeout is not None and time.monotonic() - started > timeout:
                return
            time.sleep(poll)


def build_deps(
    settings: Settings | None = None,
    *,
    db_url: str | None = None,
    ocr: OcrProvider | None = None,
    run_migrations: bool = True,
) -> DocumentsDeps:
    """Deps on the configured database (migrated on first use)."""
    settings = settings or get_settings()
    stores = open_stores(settings, db_url=db_url, run_migrations=run_migrations)
    deps = DocumentsDeps(
        repo=DocumentsRepository(stores.engine),
        settings=settings,
        ocr=ocr or ocr_engine(home=settings.home),
    )
    recover_stale_runs(deps)  # a killed process must not leave an extraction in_progress
    return deps
