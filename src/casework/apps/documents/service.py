"""What the app's faces (CLI, API, review, demo, evaluation) call: adding files, stacks and
their export, starting recorded runs (extractions, corrections, stack builds).

A run is recorded event by event in ``documents_run_events`` (the spec's flat events plus a
sequence number) and runs in its own thread, so it goes on when no client listens and a
client that disconnects re-reads from ``Last-Event-ID``.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from casework.apps.documents.adversarial import Doors
from casework.apps.documents.agent import (
    build_whole_table,
    define_stack_columns,
    finish_extraction,
    run_correction,
    run_extraction,
    write_stack_row,
)
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.export import table_csv
from casework.apps.documents.failed_review import review_key, review_outcome
from casework.apps.documents.fields import Readings, save_readings, stored_readings
from casework.apps.documents.intake import AddedFile, PageProgress, ReadTask, failed_file
from casework.apps.documents.models import (
    DocumentInfo,
    ExtractionDecision,
    ExtractionInput,
    StackInfo,
)
from casework.apps.documents.ocr import (
    ENGINES,
    OcrProvider,
    ReadResult,
    boxes_to_text,
    ocr_provider,
    read_path,
)
from casework.apps.documents.recording import RunHandle, start_run
from casework.apps.documents.repository import (
    REVIEW_ACTION,
    REVIEW_THREAD_PREFIX,
    DocumentsRepository,
)
from casework.apps.documents.settings import DocumentsSettings
from casework.apps.documents.stacks import create_stack_tools
from casework.apps.documents.strategies import STRATEGIES
from casework.apps.documents.tools import create_tools
from casework.config import Settings, get_settings
from casework.errors import InputError, ToolRetry
from casework.llm.roles import RoleModels
from casework.registry import strategy_named
from casework.runtime.approvals import SideEffectJournal
from casework.runtime.batch import BatchConfig, BatchResult, run_batch
from casework.runtime.context import Caller, Role
from casework.runtime.review_provider import DecideOutcome
from casework.runtime.runconfig import RunConfig
from casework.stores import open_stores

__all__ = [
    "DEMO_OWNER",
    "ENGINE_NAMES",
    "EVAL_OWNER",
    "STRATEGIES",
    "add_file",
    "add_files",
    "add_to_stack",
    "boxes_to_text",
    "build_deps",
    "create_stack",
    "decide_failed_extraction",
    "extraction_owner",
    "follow_run",
    "ocr_engine",
    "read_file",
    "record_model_readings",
    "recover_stale_runs",
    "settled_review",
    "stack_csv",
    "start_correction",
    "start_extraction",
    "start_stack_build",
]


EVAL_OWNER = Caller(user_id=-1, name="documents-eval", role=Role.USER)
"""Owner of the documents an evaluation adds: no user has a negative id, so nobody sees them."""
DEMO_OWNER = Caller(user_id=-2, name="documents-demo", role=Role.USER)
"""Owner of the demo's documents, apart from every real user's."""


def add_file(
    deps: DocumentsDeps,
    user_id: int,
    path: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> DocumentInfo:
    """Read one file (text layer, or OCR page by page), then store it and its text in one
    transaction: a file that cannot be read stores nothing (one sentence why)."""
    read = read_path(path, provider=deps.ocr, progress=progress)
    return deps.repo.add_document(user_id, filename=path.name, data=path.read_bytes(), read=read)


ENGINE_NAMES = tuple(ENGINES)
"""The OCR engines ``CASEWORK_DOCUMENTS__OCR_ENGINE`` may name, the default first."""


def ocr_engine(name: str | None = None) -> OcrProvider:
    """The OCR engine of that name, else the one the settings name
    (``CASEWORK_DOCUMENTS__OCR_ENGINE``); unknown or not installed is one sentence."""
    return ocr_provider(name or DocumentsSettings().ocr_engine)


def read_file(
    path: Path, *, engine: str | None = None, progress: Callable[[int, int], None] | None = None
) -> ReadResult:
    """The text a file yields, page by page, as an extraction would see it; nothing is stored
    (``documents ocr FILE``: what the rules and the model read)."""
    return read_path(path, provider=ocr_engine(engine), progress=progress)


def add_files(
    deps: DocumentsDeps,
    user_id: int,
    paths: list[Path],
    *,
    batch: BatchConfig | None = None,
    progress: PageProgress | None = None,
) -> list[AddedFile]:
    """Every file read through the platform's batch seam (``run_batch``: worker threads here,
    or a Ray cluster), then stored here in the order given, each file with its text in one
    transaction as soon as the files before it are done: a bad file is one sentence in its
    result, the others are still added, and document ids follow the command line.
    ``progress(name, pages_done, pages)`` follows each file's pages (local executor only);
    ``batch.progress`` is called as each file is read."""
    if not paths:
        raise InputError("Name at least one PDF, PNG or JPEG file.")
    config = dataclasses.replace(batch or BatchConfig())
    added: list[AddedFile] = []
    finished: dict[int, BatchResult[ReadResult]] = {}
    outer = config.progress

    def store(r: BatchResult[ReadResult]) -> AddedFile:
        path = paths[r.index]
        if r.error is not None or r.value is None:
            return failed_file(path, r.error or RuntimeError("no result"))
        try:
            doc = deps.repo.add_document(
                user_id, filename=path.name, data=path.read_bytes(), read=r.value
            )
        except Exception as exc:
            return failed_file(path, exc)
        return AddedFile(path, doc, None)

    def read_one(r: BatchResult[Any]) -> None:
        finished[r.index] = r
        while len(added) in finished:
            added.append(store(finished.pop(len(added))))
        if outer is not None:
            outer(r)

    config.progress = read_one
    run_batch(paths, ReadTask(deps.ocr, progress), config)
    return added


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
            decision = run(input, deps, _recorded(deps, config, emit, caller))
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
                _recorded(deps, config, emit, caller),
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


def _recorded(
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


# ---------------------------------------------------------------------- failed extractions
REVIEW_SETTLE_WAIT_SECONDS = 5.0
"""How long a second decision on a failed extraction waits for the first one's journal entry."""


def extraction_owner(deps: DocumentsDeps, user_id: int) -> Caller:
    """The owner of a failed extraction: a retry runs as them, in their tenant."""
    name = deps.repo.user_name(user_id)
    return Caller(user_id=user_id, name=name or f"user {user_id}", role=Role.USER)


def settled_review(deps: DocumentsDeps, extraction_id: int) -> DecideOutcome | None:
    """Who decided on a failed extraction, when and how; None while nobody has (a decision
    under way, or one that died, still waits)."""
    entry = SideEffectJournal(deps.repo.engine).entry(review_key(extraction_id))
    if entry is None or entry.status != "done" or not isinstance(entry.result, dict):
        return None
    return review_outcome(entry.result, applied=False)


def decide_failed_extraction(
    deps: DocumentsDeps,
    extraction_id: int,
    action: str,
    *,
    note: str,
    actor: str,
    strategy: str = "cascade",
    config: RunConfig | None = None,
    background: bool = True,
) -> DecideOutcome:
    """A person's decision on a failed extraction: retry it (``start_extraction`` on the same
    document and fields, as its owner, under ``config``) or mark it reviewed. One entry of the side-effect
    journal under the extraction's key, so a double press or a second reviewer changes
    nothing and reads who decided first."""
    if action not in ("approve", "reject"):
        raise InputError("A failed extraction is retried (approve) or marked reviewed.")
    failed = deps.repo.failed_extraction(extraction_id)
    ext = failed.extraction
    token = uuid.uuid4().hex
    key = review_key(ext.id)
    journal = SideEffectJournal(deps.repo.engine)

    def settle(_key: str) -> dict[str, Any]:
        result: dict[str, Any] = {
            "by": actor,
            "at": datetime.now(UTC).isoformat(),
            "note": note,
            "token": token,
        }
        if action == "reject":
            return result | {"action": "reviewed"}
        handle = start_extraction(
            deps,
            extraction_owner(deps, failed.owner_id),
            ext.document_id,
            fields=ext.requested_fields,
            strategy=strategy,
            config=config,
            background=background,
        )
        return result | {
            "action": "retry",
            "run_id": handle.run_id,
            "extraction_id": handle.extraction_id,
        }

    def settled_elsewhere(_key: str) -> dict[str, Any] | None:
        # Another decision holds the intent: wait for its answer rather than retry twice.
        deadline = time.monotonic() + REVIEW_SETTLE_WAIT_SECONDS
        while time.monotonic() < deadline:
            entry = journal.entry(key)
            if entry is not None and entry.status == "done":
                return entry.result
            time.sleep(0.05)
        return None

    result = journal.once(
        key,
        settle,
        reconcile=settled_elsewhere,
        thread_id=f"{REVIEW_THREAD_PREFIX}{ext.id}",
        action=REVIEW_ACTION,
        args={"action": action, "by": actor},
    )
    return review_outcome(result, applied=result.get("token") == token)


# ---------------------------------------------------------------------- stacks
def create_stack(deps: DocumentsDeps, user_id: int, name: str) -> StackInfo:
    """An empty stack of the user's."""
    return deps.repo.create_stack(user_id, name)


def add_to_stack(
    deps: DocumentsDeps, user_id: int, stack_id: int, document_ids: list[int]
) -> StackInfo:
    """Add the user's documents to their stack, all or none."""
    return deps.repo.add_to_stack(user_id, stack_id, document_ids)


def start_stack_build(
    deps: DocumentsDeps,
    caller: Caller,
    stack_id: int,
    *,
    config: RunConfig | None = None,
    batch: BatchConfig | None = None,
    background: bool = True,
) -> RunHandle:
    """Build (or resume) the stack's table with the stacks agent, as a recorded run, under
    ``config`` (default: the settings' models) with its events going to the run's record."""
    deps.repo.get_stack(caller.user_id, stack_id)  # 404 before a run exists
    return start_run(
        deps.repo,
        caller.user_id,
        "stack",
        lambda emit: run_stack_build(
            deps,
            caller.user_id,
            stack_id,
            _recorded(deps, config, emit, caller),
            batch=batch,
            open_deps=build_deps,
        ),
        complete=lambda out: {"complete": True, **out},
        stack_id=stack_id,
        background=background,
    )


def stack_csv(deps: DocumentsDeps, user_id: int, stack_id: int) -> tuple[str, int]:
    """The stack's table as CSV, one row per document, and its number of rows."""
    table = deps.repo.table_state(user_id, stack_id)
    if table is None:
        raise InputError(
            f"Stack {stack_id} has no table yet; build it first "
            f"(`casework documents stack build {stack_id}`)."
        )
    return table_csv(table), len(table.rows)


def record_model_readings(
    readings: list[tuple[str, bool]], settings: Settings, source: str
) -> str | None:
    """Store the bundled model's record per field from (field, right) readings, for the field
    layer; a field these readings do not cover keeps the record in force (the layer stops
    asking for a field it reads badly, so a later run cannot read it again). Returns what was
    stored, in a sentence; None when there was nothing to count."""
    if not readings:
        return None
    fitted = Readings.counted(readings, source)
    merged = {**stored_readings(settings.home).by_field, **fitted.by_field}
    record = Readings(dict(sorted(merged.items())), source)
    path = save_readings(record, settings.home)
    off = [n for n in record.by_field if not record.trusted(n)]
    return (
        f"the model's readings of {len(fitted.by_field)} fields counted ({len(readings)} "
        f"readings); it is not asked for {', '.join(off) if off else 'no field'}; stored: {path}"
    )


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
        ocr=ocr or ocr_engine(),
    )
    recover_stale_runs(deps)  # a killed process must not leave an extraction in_progress
    return deps


# Building a stack's table: the stacks agent (agent.py) once, or a batch of row runs.


SINGLE_RUN_MAX = 5
"""Up to this many documents without a row, one stacks agent builds the whole table (the
spec's agent); beyond it the build is batched: columns first, then a run per document."""


OpenDeps = Callable[[Settings], DocumentsDeps]
"""How a Ray worker opens the app's deps from the settings (``service.build_deps``)."""


class _RowTask:
    """``task(doc_id)`` writes one row with the build's model. It crosses to Ray workers
    pickled with the settings and the model spec only (never a live model): there it opens
    its own stores with ``open_deps``, and the spec's model (the settings' specialist without
    one)."""

    def __init__(
        self,
        deps: DocumentsDeps,
        user_id: int,
        stack_id: int,
        model: BaseChatModel | None,
        model_spec: str | None,
        open_deps: OpenDeps,
    ) -> None:
        self.settings, self.user_id, self.stack_id = deps.settings, user_id, stack_id
        self.model_spec = model_spec
        self.open_deps = open_deps
        self._deps: DocumentsDeps | None = deps
        self._model = model

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_deps"] = state["_model"] = None
        return state

    def __call__(self, doc_id: int) -> bool:
        if self._deps is None:  # a Ray worker's first row
            self._deps = self.open_deps(self.settings)
            self._model = RoleModels(self.settings, self.model_spec)("specialist")
        deps, model = self._deps, self._model
        assert model is not None
        return write_stack_row(deps, self.user_id, self.stack_id, doc_id, model)


def run_stack_build(
    deps: DocumentsDeps,
    user_id: int,
    stack_id: int,
    config: RunConfig,
    *,
    batch: BatchConfig | None = None,
    open_deps: OpenDeps,
) -> dict[str, Any]:
    """Build (or resume) the stack's table under ``config`` (its specialist model, its event
    sink); it ends completed, or in_progress with why.

    Up to ``SINGLE_RUN_MAX`` documents without a row, the stacks agent does it all. Beyond,
    the build is batched: the columns (unless defined), then each missing row by its own run
    through the platform's ``run_batch`` (``batch``: local threads or Ray, ``concurrency``),
    each row written as it ends; then ``complete_table``'s own check closes the table. A Ray
    worker opens its deps with ``open_deps`` and resolves the config's model spec itself."""
    stack = deps.repo.get_stack(user_id, stack_id)
    if not stack.document_ids:
        from casework.errors import InputError

        raise InputError(
            f"Stack {stack_id} has no documents; add some with `casework documents stack add`."
        )
    done = {r["document_id"] for r in stack.table.rows} if stack.table else set()
    missing = [d for d in stack.document_ids if d not in done]
    chat = config.models("specialist")
    emit = config.events
    cost = 0.0
    if len(missing) <= SINGLE_RUN_MAX:
        result = build_whole_table(deps, user_id, stack, chat, emit)
        ended_by, cost = result.ended_by, result.usage.cost_usd or 0.0
    else:
        ended_by = "rows"
        if stack.table is None or not stack.table.columns:
            result = define_stack_columns(deps, user_id, stack, chat, emit)
            cost += result.usage.cost_usd or 0.0
            ended_by = result.ended_by
        table = deps.repo.table_state(user_id, stack_id)
        if table is not None and table.columns:
            rows = dataclasses.replace(batch or BatchConfig(concurrency=1))
            written = [0]

            def row_done(item: BatchResult[bool]) -> None:
                written[0] += 1
                ok = item.error is None and item.value
                why = "" if ok else f": {item.error or 'the run ended without extract_row'}"
                if emit:
                    emit(
                        {
                            "text": f"row {written[0]}/{len(missing)}: document {missing[item.index]}"
                            + (" written" if ok else f" has no row{why}")
                        }
                    )

            rows.progress = row_done
            task = _RowTask(deps, user_id, stack_id, chat, config.models.override, open_deps)
            run_batch(missing, task, rows)
            try:
                tools = create_stack_tools(stack_id, user_id, deps.repo)
                tools[-1].func()  # type: ignore[attr-defined]  # complete_table's own check
                ended_by = "submit"
            except ToolRetry as exc:
                ended_by = f"rows ({exc})"
    table = deps.repo.table_state(user_id, stack_id)
    return {
        "stack_id": stack_id,
        "status": table.status if table else "not started",
        "rows": len(table.rows) if table else 0,
        "documents": len(stack.document_ids),
        "ended_by": ended_by,
        "cost": cost,
    }


def _extraction_on(
    given: ExtractionInput, repo: DocumentsRepository, config: RunConfig
) -> ExtractionDecision:
    """The extraction agent on ``repo`` (no OCR: the attacks' documents carry their text)."""
    deps = DocumentsDeps(repo=repo, settings=get_settings(), ocr=None)  # type: ignore[arg-type]
    return run_extraction(given, deps, config)


def tenancy_doors() -> Doors:
    """The tools and the agent the tenancy attacks (``adversarial``) go through."""
    return Doors(tools=create_tools, agent=_extraction_on)
