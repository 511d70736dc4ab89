"""Stacks: made, filled, built into a table (the stacks agent once, or a batch of row runs)
as a recorded run, and exported as CSV."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from casework.apps.documents.agent import build_whole_table, define_stack_columns, write_stack_row
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.export import table_csv
from casework.apps.documents.models import StackInfo
from casework.apps.documents.recording import RunHandle, start_run
from casework.apps.documents.service.runs import build_deps, recorded_config
from casework.apps.documents.stacks import create_stack_tools
from casework.config import Settings
from casework.errors import InputError, ToolRetry
from casework.llm.roles import RoleModels
from casework.runtime.batch import BatchConfig, BatchResult, run_batch
from casework.runtime.context import Caller
from casework.runtime.runconfig import RunConfig

__all__ = [
    "SINGLE_RUN_MAX",
    "OpenDeps",
    "add_to_stack",
    "create_stack",
    "run_stack_build",
    "stack_csv",
    "start_stack_build",
]


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
            recorded_config(deps, config, emit, caller),
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
