"""The stacks agent: a set of documents into one table, one row per document.

``create_stack_tools(stack_id, user_id, db)`` binds the seven tools to one stack of one user;
``doc_id`` arguments outside the stack are refused with the same sentence whether the document
is another user's, in another stack, or does not exist. Every row is written as it is
extracted, so a long build is resumable: a new build sees the table state and fills the
documents that still have no row.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any

from langchain.tools import tool
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from casework.apps.documents.agent import TerminalTool
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.repository import DocumentsRepository
from casework.config import Limits, Settings
from casework.errors import CaseworkError, ToolRetry
from casework.llm.roles import RoleModels
from casework.runtime.batch import BatchConfig, BatchResult, run_batch
from casework.runtime.prompts import load_prompt
from casework.runtime.react import ReactAgent
from casework.runtime.runconfig import EventSink, RunConfig

__all__ = ["STACK_TOOL_NAMES", "create_stack_tools", "run_stack_build"]

STACK_TOOL_NAMES = (
    "list_documents",
    "get_document_text",
    "define_columns",
    "extract_row",
    "update_cell",
    "get_table_state",
    "complete_table",
)
COMPLETE_TABLE = "complete_table"
COLUMN_TYPES = ("text", "number", "date", "list")
MAX_COLUMNS = 30
_COLUMN = re.compile(r"[a-z][a-z0-9_]{0,59}")


def _columns_errors(columns: Any) -> list[str]:
    if not isinstance(columns, list) or not columns:
        return ["columns must be a non-empty list of {name, type, description}"]
    if len(columns) > MAX_COLUMNS:
        return [f"at most {MAX_COLUMNS} columns"]
    errors, seen = [], set()
    for i, col in enumerate(columns):
        if not isinstance(col, dict):
            errors.append(f"column {i} must be an object")
            continue
        name, kind = col.get("name"), col.get("type", "text")
        if not isinstance(name, str) or not _COLUMN.fullmatch(name):
            errors.append(f"column {i} name {name!r} must be snake_case (a-z, 0-9, _)")
        elif name in seen:
            errors.append(f"column {name!r} is defined twice")
        seen.add(name)
        if kind not in COLUMN_TYPES:
            errors.append(f"column {name!r} type {kind!r} must be one of {', '.join(COLUMN_TYPES)}")
    return errors


def create_stack_tools(
    stack_id: int, user_id: int, db: DocumentsRepository, *, only: int | None = None
) -> list[BaseTool]:
    """The seven tools bound to one stack of one user. ``only`` narrows them to one document
    of the stack (a batched build's row run): every other ``doc_id`` is refused like one
    outside the stack, and the lists show that document alone."""

    def stack_docs() -> list[tuple[int, str]]:
        docs = db.stack_documents(user_id, stack_id)
        return [(d, f) for d, f in docs if only is None or d == only]

    def in_stack(doc_id: Any) -> int:
        ids = {d for d, _ in stack_docs()}
        if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id not in ids:
            raise ToolRetry(
                f"Document {doc_id} is not in this stack; call list_documents for the ids you can use."
            )
        return doc_id

    def column_names() -> list[str]:
        table = db.table_state(user_id, stack_id)
        if table is None or not table.columns:
            raise ToolRetry("No columns yet; call define_columns first.")
        return [c["name"] for c in table.columns]

    def check_conf(name: str, conf: Any) -> None:
        if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0 <= conf <= 1:
            raise ToolRetry(f"Confidence for '{name}' must be 0.0-1.0, got {conf}")

    @tool
    def list_documents() -> str:
        """List all documents in this stack (doc_id, filename, whether it has a row)."""
        table = db.table_state(user_id, stack_id)
        done = {r["document_id"] for r in table.rows} if table else set()
        docs = [{"doc_id": d, "filename": f, "has_row": d in done} for d, f in stack_docs()]
        return json.dumps(docs)

    @tool
    def get_document_text(doc_id: int) -> str:
        """Read the text of one document of this stack."""
        found = db.stack_document_text(user_id, stack_id, in_stack(doc_id))
        if found is None:
            raise ToolRetry("No OCR data found for this document")
        return f"Document {doc_id} ({found[1]} pages):\n\n{found[0]}"

    @tool
    def define_columns(columns: list[dict[str, Any]]) -> str:
        """Define the table's columns from what the documents share: [{name (snake_case), type (text|number|date|list), description}]."""
        if only is not None:
            raise ToolRetry(f"The columns are set; write the row of document {only} only.")
        errors = _columns_errors(columns)
        if errors:
            raise ToolRetry("Validation failed:\n- " + "\n- ".join(errors))
        clean = [
            {
                "name": c["name"],
                "type": c.get("type", "text"),
                "description": str(c.get("description", ""))[:200],
            }
            for c in columns
        ]
        db.define_columns(user_id, stack_id, clean)
        return f"Defined {len(clean)} columns: {', '.join(c['name'] for c in clean)}"

    @tool
    def extract_row(doc_id: int, values: dict[str, Any], confidences: dict[str, Any]) -> str:
        """Write one document's row: column -> value (null if absent) and column -> confidence 0.0-1.0."""
        doc = in_stack(doc_id)
        names = column_names()
        unknown = [k for k in values if k not in names]
        if unknown:
            raise ToolRetry(
                f"Unknown columns: {', '.join(unknown)}; the columns are: {', '.join(names)}"
            )
        for name in values:
            check_conf(name, confidences.get(name))
        cells = {n: values.get(n) for n in names}
        confs = {n: float(confidences[n]) if n in values else 0.0 for n in names}
        new = db.upsert_row(user_id, stack_id, doc, cells, confs)
        return f"{'Saved' if new else 'Replaced'} the row of document {doc} ({len(values)} values)"

    @tool
    def update_cell(doc_id: int, column: str, value: Any, confidence: float) -> str:
        """Fix one cell of a document's row."""
        doc = in_stack(doc_id)
        if column not in column_names():
            raise ToolRetry(
                f"Unknown column '{column}'; the columns are: {', '.join(column_names())}"
            )
        check_conf(column, confidence)
        try:
            db.update_cell(user_id, stack_id, doc, column, value, float(confidence))
        except CaseworkError as exc:
            raise ToolRetry(str(exc)) from None
        return f"Updated document {doc} '{column}' = {json.dumps(value, ensure_ascii=False)} (confidence: {confidence})"

    @tool
    def get_table_state() -> str:
        """The columns, the rows so far and the documents still without a row."""
        table = db.table_state(user_id, stack_id)
        docs = [d for d, _ in stack_docs()]
        if table is None:
            return json.dumps(
                {"columns": [], "rows": [], "missing_rows": docs, "status": "not started"}
            )
        done = {r["document_id"] for r in table.rows}
        return json.dumps(
            {
                "columns": table.columns,
                "rows": [
                    {"doc_id": r["document_id"], "cells": r["cells"]}
                    for r in table.rows
                    if r["document_id"] in docs
                ],
                "missing_rows": [d for d in docs if d not in done],
                "status": table.status,
            },
            ensure_ascii=False,
        )

    @tool
    def complete_table() -> str:
        """Mark the table complete (every document needs its row)."""
        if only is not None:
            raise ToolRetry(f"This run writes the row of document {only} only; call extract_row.")
        table = db.table_state(user_id, stack_id)
        if table is None or not table.columns:
            raise ToolRetry("Cannot complete: no columns defined")
        done = {r["document_id"] for r in table.rows}
        missing = [d for d, _ in db.stack_documents(user_id, stack_id) if d not in done]
        if missing:
            raise ToolRetry(
                f"Cannot complete: documents without a row: {', '.join(map(str, missing))}"
            )
        db.set_table_status(user_id, stack_id, "completed")
        return f"Table complete. {len(table.rows)} rows, {len(table.columns)} columns."

    return [
        list_documents,
        get_document_text,
        define_columns,
        extract_row,
        update_cell,
        get_table_state,
        complete_table,
    ]


class CompleteTable(BaseModel):
    """Mark the table complete (every document needs its row)."""


TABLE_NUDGE = (
    "The table is not complete yet. Call get_table_state, write a row with extract_row for "
    "every document in missing_rows, then call complete_table."
)


SINGLE_RUN_MAX = 5
"""Up to this many documents without a row, one stacks agent builds the whole table (the
spec's agent); beyond it the build is batched: columns first, then a run per document."""
COLUMN_SAMPLE = 3


class DefineColumns(BaseModel):
    """Define the table's columns from what the documents share."""

    columns: list[dict[str, Any]]


class ExtractRow(BaseModel):
    """Write the document's row: column -> value (null if absent), column -> confidence 0.0-1.0."""

    doc_id: int
    values: dict[str, Any]
    confidences: dict[str, Any]


def _events(agent: ReactAgent, task: str, emit: EventSink | None) -> Any:
    result = None
    for event in agent.iter_events(task, trace=False):
        if event["type"] == "complete":
            result = event["result"]
        elif emit and event["type"] == "text":
            emit({"text": event["text"]})
        elif emit and event["type"] == "tool":
            emit({"tool": event["tool"], "input": event["input"]})
    assert result is not None
    return result


def _whole_table(
    deps: DocumentsDeps, user_id: int, stack: Any, model: BaseChatModel, emit: Any
) -> Any:
    """The spec's stacks agent: all seven tools, ``complete_table`` ends the run."""
    tools = create_stack_tools(stack.id, user_id, deps.repo)
    n = len(stack.document_ids)
    missing = n - (len(stack.table.rows) if stack.table else 0)
    limits = Limits(
        max_model_calls=6 + 3 * n, max_tool_calls=5 + 3 * n, recursion_limit=40 + 12 * n
    )
    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(model), limits=limits),
        role="specialist",
        tools=tools[:-1],
        decision_model=CompleteTable,
        system_prompt=load_prompt(__package__, "stack_system"),
        name="documents-stack",
        submit_name=COMPLETE_TABLE,
        submit_description="Mark the table complete (every document needs its row).",
        middleware=[TerminalTool(tools[-1], TABLE_NUDGE)],
    )
    task = load_prompt(__package__, "stack_task", name=stack.name, documents=n, missing=missing)
    return _events(agent, task, emit)


def _columns(deps: DocumentsDeps, user_id: int, stack: Any, model: BaseChatModel, emit: Any) -> Any:
    """A batched build's first step: read a sample, ``define_columns`` ends the run."""
    tools = {t.name: t for t in create_stack_tools(stack.id, user_id, deps.repo)}
    limits = Limits(max_model_calls=4 + COLUMN_SAMPLE, max_tool_calls=3 + COLUMN_SAMPLE)
    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(model), limits=limits),
        role="specialist",
        tools=[tools["list_documents"], tools["get_document_text"], tools["get_table_state"]],
        decision_model=DefineColumns,
        system_prompt=load_prompt(__package__, "stack_system"),
        name="documents-stack-columns",
        submit_name="define_columns",
        submit_description=tools["define_columns"].description,
        fallback=lambda _reason: DefineColumns(columns=[]),  # ended without: no columns written
        middleware=[
            TerminalTool(tools["define_columns"], "Call define_columns with the columns now.")
        ],
    )
    task = load_prompt(
        __package__, "stack_columns", name=stack.name, documents=len(stack.document_ids)
    )
    return _events(agent, task, emit)


def write_row(
    deps: DocumentsDeps, user_id: int, stack_id: int, doc_id: int, model: BaseChatModel
) -> bool:
    """One document's row by its own small run (tools narrowed to it; ``extract_row`` ends
    the run). True when the row is written."""
    tools = {t.name: t for t in create_stack_tools(stack_id, user_id, deps.repo, only=doc_id)}
    stack = deps.repo.get_stack(user_id, stack_id)
    table = deps.repo.table_state(user_id, stack_id)
    assert table is not None  # the columns step ran first
    filename = dict(deps.repo.stack_documents(user_id, stack_id))[doc_id]
    limits = Limits(max_model_calls=4, max_tool_calls=3, recursion_limit=30)
    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(model), limits=limits),
        role="specialist",
        tools=[tools["get_document_text"], tools["get_table_state"]],
        decision_model=ExtractRow,
        system_prompt=load_prompt(__package__, "stack_system"),
        name="documents-stack-row",
        submit_name="extract_row",
        submit_description=tools["extract_row"].description,
        fallback=lambda _reason: ExtractRow(doc_id=doc_id, values={}, confidences={}),
        middleware=[TerminalTool(tools["extract_row"], f"Call extract_row for document {doc_id}.")],
    )
    columns = "\n".join(
        f"- {c['name']} ({c['type']}){': ' + c['description'] if c.get('description') else ''}"
        for c in table.columns
    )
    task = load_prompt(
        __package__, "stack_row", doc_id=doc_id, filename=filename, name=stack.name, columns=columns
    )
    _events(agent, task, None)
    after = deps.repo.table_state(user_id, stack_id)
    return after is not None and any(r["document_id"] == doc_id for r in after.rows)


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
        return write_row(deps, self.user_id, self.stack_id, doc_id, model)


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
        result = _whole_table(deps, user_id, stack, chat, emit)
        ended_by, cost = result.ended_by, result.usage.cost_usd or 0.0
    else:
        ended_by = "rows"
        if stack.table is None or not stack.table.columns:
            result = _columns(deps, user_id, stack, chat, emit)
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
