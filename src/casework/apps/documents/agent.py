"""The extraction agent: ReactAgent wiring, the task prompts, and "always completes".

``complete_extraction`` is the run's terminal tool: ReactAgent stops when it succeeds. It is
the spec's tool, not a dummy: the runtime's submit slot is routed through it by a middleware,
so its own check ("Cannot complete: no fields extracted") decides whether the run may end.
A model that stops without completing is nudged once (ReactAgent); after that the runtime
applies the same check itself, then falls back to the rules extractor, then fails the
extraction with a reason. No run leaves an extraction ``in_progress``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import hook_config
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from casework.apps.documents import extractor, rules
from casework.apps.documents.deps import DocumentsDeps
from casework.apps.documents.models import ROLES, ExtractionDecision, ExtractionInput
from casework.apps.documents.repository import CompletionCheck
from casework.apps.documents.stacks import COMPLETE_TABLE, create_stack_tools
from casework.apps.documents.tools import create_tools
from casework.config import Limits
from casework.errors import CaseworkError, ToolRetry
from casework.llm.roles import RoleModels
from casework.runtime.context import RunContext
from casework.runtime.decision import EndReason, Evidence, RunInfo
from casework.runtime.harness import RunResult
from casework.runtime.middleware import ModelSettings
from casework.runtime.prompts import load_prompt
from casework.runtime.react import ReactAgent
from casework.runtime.runconfig import EventSink, RunConfig

__all__ = [
    "COMPLETE",
    "NUDGE",
    "ExtractionRef",
    "TerminalTool",
    "build_extraction_agent",
    "finish_extraction",
    "run_correction",
    "run_extraction",
]

COMPLETE = "complete_extraction"
LIMITS = Limits(max_model_calls=10, max_tool_calls=20, recursion_limit=80, max_seconds=900)
EXTRACTION_MAX_TOKENS = 1024
"""Reply budget of each extraction model call (its fields and their scores in one call)."""
"""An extraction needs about four calls (read, identify, extract, complete); ten is ample.
The time budget bounds a run on a slow CPU; ``service.recover_stale_runs`` relies on it.
A run config's own ``limits`` replace it."""


@dataclass(frozen=True, kw_only=True)
class ExtractionRef(RunContext):
    """The run context: the ids are bound into the tools; the tenant travels for the trace."""

    extraction_id: int
    document_id: int


class CompleteExtraction(BaseModel):
    """Mark extraction as complete"""


NUDGE = (
    "The extraction is not complete yet. If you have not saved fields, call extract_fields "
    "with the fields and their confidences; then call complete_extraction."
)


class TerminalTool(AgentMiddleware):
    """Routes ReactAgent's terminal call to a real tool (``complete_extraction``,
    ``complete_table``, and in a batched stack build ``define_columns`` / ``extract_row``, with
    the call's arguments: its own check and DB write decide whether the run may end), and
    words the run's one nudge for that tool (ReactAgent's default asks for a verdict)."""

    def __init__(self, tool: BaseTool, nudge: str) -> None:
        super().__init__()
        self.tool = tool
        self.nudge = nudge

    @property
    def name(self) -> str:
        return f"documents_{self.tool.name}"

    # after_model hooks run in reverse order, so this one runs before ReactAgent's (which
    # nudges in its after_model node whenever an app adds one): it takes the run's single
    # nudge (``nudges`` is ReactAgent's counter) and words it.
    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and not last.tool_calls and state.get("nudges", 0) == 0:
            nudge = HumanMessage(self.nudge, additional_kwargs={"casework_nudge": True})
            return {"messages": [nudge], "nudges": 1, "jump_to": "model"}
        return None

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        call = request.tool_call
        if call["name"] != self.tool.name:
            return handler(request)
        # ToolRetry propagates: ReactAgent's middleware turns it into an error ToolMessage.
        args = call.get("args") or {}
        schema = self.tool.args_schema
        if args and isinstance(schema, type) and issubclass(schema, BaseModel):
            try:
                schema.model_validate(args)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "arguments"
                raise ToolRetry(f"{self.tool.name}: {where}: {first['msg']}") from None
        text = self.tool.func(**args)  # type: ignore[attr-defined]
        return ToolMessage(text, tool_call_id=call["id"], name=self.tool.name)


def build_extraction_agent(
    config: RunConfig, tools: list[BaseTool], *, custom: bool
) -> ReactAgent[CompleteExtraction]:
    """The agent over the seven tools on ``config``'s agent model and budgets (``LIMITS``
    when it has none; its events are streamed, not traced); ``complete_extraction`` is the
    terminal one."""
    complete = next(t for t in tools if t.name == COMPLETE)
    return ReactAgent(
        config=replace(config, limits=config.limits or LIMITS, traces=None),
        role=ROLES["agent"],
        tools=[t for t in tools if t.name != COMPLETE],
        decision_model=CompleteExtraction,
        system_prompt=load_prompt(__package__, "custom_system" if custom else "extraction_system"),
        name="documents-extraction",
        submit_name=COMPLETE,
        submit_description="Mark extraction as complete",
        context_schema=ExtractionRef,
        # extract_fields carries every field and its score in one call: 384 tokens (the
        # bundled model's default) cut a ten-field invoice mid-JSON
        middleware=[TerminalTool(complete, NUDGE), ModelSettings(max_tokens=EXTRACTION_MAX_TOKENS)],
    )


def _stream(agent: ReactAgent, task: str, ref: ExtractionRef, config: RunConfig) -> RunResult:
    """Run the agent; the spec's flat events (``{text}``, ``{tool, input}``) go to the run
    config's sink. The run is recorded as those events (``documents_run_events``), not as a
    trace."""
    result: RunResult | None = None
    for event in agent.iter_events(task, context=ref, trace=False):
        kind = event["type"]
        if kind == "complete":
            result = event["result"]
        elif kind == "text":
            config.emit({"text": event["text"]})
        elif kind == "tool":
            config.emit({"tool": event["tool"], "input": event["input"]})
    assert result is not None
    return result


def finish_extraction(
    deps: DocumentsDeps, user_id: int, extraction_id: int, ended_by: str, *, fallback: bool
) -> None:
    """Leave the extraction ``completed`` or ``failed`` with a reason, whatever the run did."""
    repo = deps.repo
    ext = repo.get_extraction(user_id, extraction_id)
    if ext.status != "in_progress":
        return
    try:
        repo.complete(
            user_id,
            extraction_id,
            reason=f"completed by the runtime: the model stopped without complete_extraction ({ended_by})",
        )
        return
    except CompletionCheck as exc:
        refusal = str(exc)
    if fallback:
        found = repo.document_text(user_id, ext.document_id)
        if found is not None:
            fields, confidences = extractor.extract(found[0], ext.requested_fields)
            if any(v is not None for k, v in fields.items() if k != "document_type"):
                repo.set_fields(
                    user_id, extraction_id, fields, confidences, method="rules_fallback"
                )
                repo.complete(
                    user_id,
                    extraction_id,
                    reason=f"the agent ended without fields ({ended_by}); the rules extractor filled them",
                )
                return
    repo.fail(user_id, extraction_id, f"{refusal} (the run ended: {ended_by})")


def decision_for(
    deps: DocumentsDeps, user_id: int, extraction_id: int, run: RunInfo | None = None
) -> ExtractionDecision:
    ext = deps.repo.get_extraction(user_id, extraction_id)
    summary = ext.reason or f"{len(ext.fields)} fields extracted ({ext.method})."
    return ExtractionDecision(
        verdict="completed" if ext.status == "completed" else "failed",
        confidence=round(rules.mean_confidence(ext.confidence_scores) * 100, 1),
        reasoning=summary[:1200],
        evidence=[
            Evidence(source="documents_extractions", ref=f"{ext.id}:{name}", fields={name: value})
            for name, value in list(ext.fields.items())[:50]
        ],
        extraction_id=ext.id,
        document_id=ext.document_id,
        document_type=ext.document_type,
        fields=ext.fields,
        confidence_scores=ext.confidence_scores,
        method=ext.method,
        run=run,
    )


def _run(
    deps: DocumentsDeps,
    *,
    user_id: int,
    extraction_id: int,
    document_id: int,
    task: str,
    custom: bool,
    requested: list[str] | None,
    config: RunConfig,
    fallback: bool,
    strategy: str,
) -> ExtractionDecision:
    started = time.perf_counter()
    tools = create_tools(extraction_id, document_id, user_id, deps.repo, requested=requested)
    name: str | None = None
    try:
        name = config.models.name(ROLES["agent"])
        agent = build_extraction_agent(config, tools, custom=custom)
        ref = ExtractionRef(
            extraction_id=extraction_id, document_id=document_id, tenant=config.caller
        )
        result = _stream(agent, task, ref, config)
        reason, detail = result.ended_by, result.detail
        usage, calls = result.usage, result.tool_calls
        run_id, thread_id = result.run_id, result.thread_id
    except CaseworkError as exc:  # no model, or it failed before the loop: still finish
        reason, detail = EndReason.ERROR_MODEL, str(exc)
        usage, calls, run_id, thread_id = None, [], "", ""
    # the stored reason says how the run ended with the model error's text, so a fallback
    # says why it was needed
    ended = f"{reason} ({detail})" if detail else str(reason)
    finish_extraction(deps, user_id, extraction_id, ended, fallback=fallback)
    if usage is not None:
        usage.wall_seconds = time.perf_counter() - started
    info = RunInfo(
        ended_by=reason,
        detail=detail,
        strategy=strategy,
        model=name,
        run_id=run_id,
        thread_id=thread_id,
        tool_calls=calls,
        usage=usage,
    )
    return decision_for(deps, user_id, extraction_id, info)


def run_extraction(
    input: ExtractionInput, deps: DocumentsDeps, config: RunConfig
) -> ExtractionDecision:
    """Create (or take) the ``in_progress`` row, run the agent on it, end it completed or
    failed (the ``agent`` strategy)."""
    repo = deps.repo
    doc = repo.get_document(input.user_id, input.document_id)
    ext_id = (
        input.extraction_id
        or repo.create_extraction(input.user_id, input.document_id, requested=input.fields).id
    )
    custom = bool(input.fields)
    task = (
        load_prompt(
            __package__,
            "task_custom",
            filename=doc.filename,
            pages=doc.page_count,
            fields=", ".join(input.fields or []),
        )
        if custom
        else load_prompt(__package__, "task_auto", filename=doc.filename, pages=doc.page_count)
    )
    return _run(
        deps,
        user_id=input.user_id,
        extraction_id=ext_id,
        document_id=doc.id,
        task=task,
        custom=custom,
        requested=input.fields,
        config=config,
        fallback=True,
        strategy="agent",
    )


def run_correction(
    deps: DocumentsDeps,
    user_id: int,
    extraction_id: int,
    instruction: str,
    config: RunConfig,
) -> ExtractionDecision:
    """Resume an extraction with the user's correction; it ends completed through the same check."""
    from casework.errors import InputError

    instruction = " ".join(instruction.split())
    if not instruction:
        raise InputError('Say what to correct, e.g. "the total is 45.10".')
    ext = deps.repo.reopen(user_id, extraction_id)
    doc = deps.repo.get_document(user_id, ext.document_id)
    task = load_prompt(
        __package__, "task_correct", filename=doc.filename, instruction=instruction[:2000]
    )
    return _run(
        deps,
        user_id=user_id,
        extraction_id=ext.id,
        document_id=doc.id,
        task=task,
        custom=bool(ext.requested_fields),
        requested=ext.requested_fields,
        config=config,
        fallback=False,
        strategy="correction",
    )


# The stacks agent (a set of documents into one table); its tools are stacks.py's, the build
# that runs it is service.run_stack_build.


class CompleteTable(BaseModel):
    """Mark the table complete (every document needs its row)."""


TABLE_NUDGE = (
    "The table is not complete yet. Call get_table_state, write a row with extract_row for "
    "every document in missing_rows, then call complete_table."
)


COLUMN_SAMPLE = 3


class DefineColumns(BaseModel):
    """Define the table's columns from what the documents share."""

    columns: list[dict[str, Any]]


class ExtractRow(BaseModel):
    """Write the document's row: column -> value (null if absent), column -> confidence 0.0-1.0."""

    doc_id: int
    values: dict[str, Any]
    confidences: dict[str, Any]


def _stack_events(agent: ReactAgent, task: str, emit: EventSink | None) -> Any:
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


def build_whole_table(
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
    return _stack_events(agent, task, emit)


def define_stack_columns(
    deps: DocumentsDeps, user_id: int, stack: Any, model: BaseChatModel, emit: Any
) -> Any:
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
    return _stack_events(agent, task, emit)


def write_stack_row(
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
    _stack_events(agent, task, None)
    after = deps.repo.table_state(user_id, stack_id)
    return after is not None and any(r["document_id"] == doc_id for r in after.rows)
