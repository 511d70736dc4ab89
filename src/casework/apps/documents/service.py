"""What the CLI and the API share: adding files, resolving users, starting recorded runs.

A run is recorded event by event in ``documents_run_events`` (the spec's flat events plus a
sequence number) and runs in its own thread, so it goes on when no client listens and a
client that disconnects re-reads from ``Last-Event-ID``.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import DocumentInfo, ExtractionDecision, ExtractionInput
from casework.apps.documents.ocr import ReadResult, read_path
from casework.errors import CaseworkError, InputError
from casework.runtime.context import Caller, Role

__all__ = [
    "DEMO_OWNER",
    "EVAL_OWNER",
    "RunHandle",
    "add_files",
    "follow_run",
    "recover_stale_runs",
    "start_correction",
    "start_extraction",
    "start_run",
    "table_csv",
]

Progress = Callable[[str, int, int], None]


EVAL_OWNER = Caller(user_id=-1, name="documents-eval", role=Role.USER)
"""Owner of the documents an evaluation adds: no user has a negative id, so nobody sees them."""
DEMO_OWNER = Caller(user_id=-2, name="documents-demo", role=Role.USER)
"""Owner of the demo's documents, apart from every real user's."""


def add_files(
    deps: DocumentsDeps, user_id: int, paths: list[Path], *, progress: Progress | None = None
) -> list[DocumentInfo]:
    """Read every file first, then store them: one bad file stores none (one sentence why)."""
    if not paths:
        raise InputError("Name at least one PDF, PNG or JPEG file.")
    reads: list[tuple[Path, bytes, ReadResult]] = []
    for path in paths:
        read = read_path(
            path,
            provider=deps.ocr,
            progress=(lambda done, total, p=path: progress(p.name, done, total))
            if progress
            else None,
        )
        reads.append((path, path.read_bytes(), read))
    return [deps.repo.add_document(user_id, filename=p.name, data=d, read=r) for p, d, r in reads]


@dataclass(frozen=True)
class RunHandle:
    run_id: str
    extraction_id: int | None
    thread: threading.Thread | None


class _Recorder:
    def __init__(self, deps: DocumentsDeps, run_id: str) -> None:
        self.deps, self.run_id, self.seq = deps, run_id, 0
        self.lock = threading.Lock()

    def emit(self, data: dict[str, Any]) -> None:
        with self.lock:
            self.seq += 1
            self.deps.repo.append_event(self.run_id, self.seq, data)


def start_run(
    deps: DocumentsDeps,
    user_id: int,
    kind: str,
    work: Callable[[Callable[[dict[str, Any]], None]], Any],
    *,
    complete: Callable[[Any], dict[str, Any]],
    extraction_id: int | None = None,
    stack_id: int | None = None,
    background: bool = True,
) -> RunHandle:
    """Record ``work(emit)``'s events under a new run id; the last event is ``{complete, ...}``."""
    run_id = uuid.uuid4().hex[:16]
    deps.repo.create_run(user_id, run_id, kind, extraction_id=extraction_id, stack_id=stack_id)
    recorder = _Recorder(deps, run_id)

    def body() -> None:
        cost = 0.0
        try:
            outcome = work(recorder.emit)
            final = complete(outcome)
            cost = float(final.get("cost") or 0.0)
        except CaseworkError as exc:
            final = {"complete": True, "error": str(exc)}
            if extraction_id is not None:
                final["extraction_id"] = extraction_id
        except Exception as exc:  # a bug must still close the stream, not hang the client
            final = {"complete": True, "error": f"{type(exc).__name__}: {exc}"}
        recorder.emit(final)
        deps.repo.finish_run(run_id, cost)

    if not background:
        body()
        return RunHandle(run_id, extraction_id, None)
    thread = threading.Thread(target=body, name=f"documents-run-{run_id}", daemon=True)
    thread.start()
    return RunHandle(run_id, extraction_id, thread)


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
    strategy: str = "agent",
    model: Any = None,
    background: bool = True,
) -> RunHandle:
    """The spec's order: create the extraction row, then run the agent on it."""
    from casework.apps.documents.agent import run_extraction
    from casework.apps.documents.strategies import STRATEGIES

    if strategy not in STRATEGIES:
        raise InputError(f"Unknown strategy {strategy!r}; use one of: {', '.join(STRATEGIES)}.")
    ext = deps.repo.create_extraction(caller.user_id, document_id, requested=fields)
    input = ExtractionInput(
        document_id=document_id, user_id=caller.user_id, fields=fields, extraction_id=ext.id
    )

    def work(emit: Callable[[dict[str, Any]], None]) -> ExtractionDecision:
        try:
            if strategy == "agent":
                return run_extraction(input, deps, model=model, emit=emit, tenant=caller)
            decision = STRATEGIES[strategy](input, deps)
            assert isinstance(decision, ExtractionDecision)
            return decision
        finally:
            _never_in_progress(deps, caller.user_id, ext.id)

    return start_run(
        deps,
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
    model: Any = None,
    background: bool = True,
) -> RunHandle:
    from casework.apps.documents.agent import run_correction

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
                model=model,
                emit=emit,
                tenant=caller,
            )
        finally:
            _never_in_progress(deps, caller.user_id, extraction_id)

    return start_run(
        deps,
        caller.user_id,
        "correct",
        work,
        complete=_extraction_complete,
        extraction_id=extraction_id,
        background=background,
    )


def _never_in_progress(deps: DocumentsDeps, user_id: int, extraction_id: int) -> None:
    """Whatever happened (even a bug), the extraction ends in a final state."""
    ext = deps.repo.get_extraction(user_id, extraction_id)
    if ext.status == "in_progress":
        from casework.apps.documents.agent import finish_extraction

        finish_extraction(deps, user_id, extraction_id, "error", fallback=False)


STALE_AFTER = timedelta(minutes=30)
"""Twice the agent's time budget: a run still ``running`` after this lost its process."""


def recover_stale_runs(deps: DocumentsDeps, *, now: datetime | None = None) -> list[str]:
    """Close runs whose process died: their extraction keeps what it wrote and ends completed
    (``complete_extraction``'s check) or failed with the reason; the stream gets its complete event."""
    from casework.apps.documents.agent import finish_extraction

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


def table_csv(table: Any) -> str:
    """A stack table as CSV: document id, filename, then one column per defined column."""
    out = io.StringIO()
    names = [c["name"] for c in table.columns]
    writer = csv.writer(out)
    writer.writerow(["document_id", "filename", *names])
    for row in table.rows:
        writer.writerow(
            [row["document_id"], row["filename"], *(_cell(row["cells"].get(n)) for n in names)]
        )
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
