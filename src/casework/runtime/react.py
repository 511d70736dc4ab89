"""The ReAct builder every tool-using agent in casework stands on.

``ReactAgent`` runs a ReAct graph (``casework.runtime.loop``: ``create_agent``'s shape and
middleware semantics, without its per-step extras) with what an evidence-based decision
needs: a terminal submit tool whose schema is the app's decision model, limits and budgets
that end a run cleanly with a NEEDS_REVIEW-style decision, tool failures returned to the model
as observations (``tool_failure``: the one rule for every app), human approval through
interrupts, and the harness's bookkeeping (``casework.runtime.harness.Run``: usage, a flat
event stream and a JSONL trace). Every run ends with an ``EndReason`` and, when the decision
model subclasses ``Decision``, ``decision.run`` (``RunInfo``). The definition
(``ReactAgent(...)``) is separate from the run (``run`` / ``arun`` / ``iter_events`` /
``aiter_events`` / ``resume``); the sync and async streams share one ``_Run``.

Limits are checked inside the model call against counters kept in the state, so a step is
the model node plus the tool node, as in bare LangGraph, and costs the same at step 200 as at
step 2 (``casework bench runtime``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, NotRequired, TypedDict, TypeVar, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    HumanInTheLoopMiddleware,
    ToolCallLimitMiddleware,
)
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelResponse,
    hook_config,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp, GraphRecursionError
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from casework.config import Limits
from casework.errors import ModelError, SourceUnavailable, ToolRetry
from casework.llm.roles import model_name
from casework.runtime.decision import (
    Decision,
    EndReason,
    ToolCallRecord,
    Verdict,
    ground_evidence,
)
from casework.runtime.events import Event
from casework.runtime.harness import Run, RunResult
from casework.runtime.loop import build_react_graph
from casework.runtime.usage import price_for

__all__ = ["ReactAgent", "ToolCallRecord", "tool_failure"]

DecisionT = TypeVar("DecisionT", bound=BaseModel)

SUBMIT_NUDGE = (
    "You have not submitted a decision. Call {submit} now with your decision, confidence and "
    "reasoning, using the evidence gathered so far."
)


class _Counts(TypedDict):
    """What the limits are checked against, kept up to date at each model call.

    Counting as the run goes (instead of rescanning every message before every model call)
    keeps a step's cost flat however long the run gets.
    """

    model_calls: int
    tool_calls: int
    tokens: int
    cost_usd: float


class _RunState(AgentState):
    ended_by: NotRequired[str]
    run_started_at: NotRequired[float]
    nudges: NotRequired[int]
    casework_counts: NotRequired[_Counts]


def _run_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Messages since the last human turn that started this run."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, HumanMessage) and not m.additional_kwargs.get("casework_nudge"):
            return list(messages[i + 1 :])
    return list(messages)


def _since_last_model_call(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The tool results (and nudges) that arrived after the last AI message."""
    tail: list[BaseMessage] = []
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            break
        tail.append(m)
    return tail


def _overrides(mw: AgentMiddleware, hook: str) -> bool:
    return getattr(type(mw), hook) is not getattr(AgentMiddleware, hook)


class _CaseworkMiddleware(AgentMiddleware[_RunState, Any]):
    """Limits, budgets, the submit stop, the nudge, and tool failures sent back to the model.

    Everything happens inside the model and tool calls (``wrap_*``), so the loop has no extra
    graph nodes: each step is the model node and the tool node, as in bare LangGraph.
    """

    state_schema = _RunState

    def __init__(self, *, limits: Limits, submit_name: str, max_nudges: int = 1) -> None:
        super().__init__()
        self.limits = limits
        self.submit_name = submit_name
        self.max_nudges = max_nudges

    @property
    def name(self) -> str:
        return "casework"

    @staticmethod
    def run_start() -> dict[str, Any]:
        """The state a new run starts from, sent with its input (rather than set by a
        ``before_agent`` node: one node fewer per run); a resumed run keeps its own."""
        counts: _Counts = {"model_calls": 0, "tool_calls": 0, "tokens": 0, "cost_usd": 0.0}
        return {"run_started_at": time.time(), "nudges": 0, "casework_counts": counts}

    def end_reason(
        self, state: Any, messages: Sequence[BaseMessage]
    ) -> tuple[EndReason | None, _Counts]:
        """Why the run must end before the next model call (or None), and the counts so far.

        Only the messages since the last model call are read; the rest is in the counts.
        """
        tail = _since_last_model_call(messages)
        counts = _Counts(**(state.get("casework_counts") or _recount(messages, len(tail))))
        counts["tool_calls"] += sum(isinstance(m, ToolMessage) for m in tail)
        if any(_is_submit(m, self.submit_name) for m in tail):
            return EndReason.SUBMIT, counts
        lim = self.limits
        if counts["model_calls"] >= lim.max_model_calls:
            return EndReason.LIMIT_MODEL_CALLS, counts
        if counts["tool_calls"] >= lim.max_tool_calls:
            return EndReason.LIMIT_TOOL_CALLS, counts
        if lim.max_tokens is not None and counts["tokens"] >= lim.max_tokens:
            return EndReason.BUDGET_TOKENS, counts
        if lim.max_cost_usd is not None and counts["cost_usd"] >= lim.max_cost_usd:
            return EndReason.BUDGET_COST, counts
        started = state.get("run_started_at")
        if lim.max_seconds is not None and started and time.time() - started >= lim.max_seconds:
            return EndReason.BUDGET_SECONDS, counts
        return None, counts

    # The guarded variant nudges in its after_model node instead: a jump set inside the model
    # call does not survive the other middleware's after_model nodes that run after it.
    nudges_after_model = False

    def _nudge_or_stop(self, state: Any) -> dict[str, Any]:
        """The update after a model turn without tool calls: one more turn with a nudge, or,
        once the nudges are spent, the end of the run without a decision."""
        nudges = state.get("nudges", 0)
        if nudges >= self.max_nudges:
            return {"ended_by": EndReason.NO_DECISION.value}
        nudge = HumanMessage(
            SUBMIT_NUDGE.format(submit=self.submit_name),
            additional_kwargs={"casework_nudge": True},
        )
        return {"messages": [nudge], "nudges": nudges + 1, "jump_to": "model"}

    def _after_call(
        self, request: Any, response: ModelResponse[Any], counts: _Counts
    ) -> ExtendedModelResponse[Any]:
        counts["model_calls"] += 1
        update: dict[str, Any] = {"casework_counts": counts}
        result = list(response.result)
        ai = next((m for m in result if isinstance(m, AIMessage)), None)
        if ai is not None:
            counts["tokens"] += _tokens(ai)
            if self.limits.max_cost_usd is not None:  # pricing costs a lookup per call
                counts["cost_usd"] += _cost(ai)
            if not ai.tool_calls and not self.nudges_after_model:
                nudge = self._nudge_or_stop(request.state)
                result.extend(nudge.pop("messages", []))
                update.update(nudge)
        return ExtendedModelResponse(
            model_response=ModelResponse(
                result=result, structured_response=response.structured_response
            ),
            command=Command(update=update),
        )

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        reason, counts = self.end_reason(request.state, request.messages)
        if reason is not None:
            return _end_turn(reason, counts)
        try:
            response = handler(request)
        except ModelError:  # a small model's malformed turn: one more try, then give up
            response = handler(request)
        return self._after_call(request, response, counts)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        reason, counts = self.end_reason(request.state, request.messages)
        if reason is not None:
            return _end_turn(reason, counts)
        try:
            response = await handler(request)
        except ModelError:
            response = await handler(request)
        return self._after_call(request, response, counts)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return tool_failure(request.tool_call, exc)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return tool_failure(request.tool_call, exc)


class _GuardedCaseworkMiddleware(_CaseworkMiddleware):
    """The same middleware, ending runs in a ``before_model`` node instead of the model call.

    Used when other middleware has ``after_model`` hooks (approvals, tool caps): an empty
    model turn would make them act again on the previous turn's tool calls (ask for the
    same approval twice), so the run must end before the model node, at the price of one
    more graph node per step. For the same reason it nudges in ``after_model``: its node runs
    last of the after_model chain, and its jump is the one the loop's exit edge reads. An
    app's own after_model hook runs before it and may nudge first, in its own words, by
    adding the nudge and ``nudges`` itself.
    """

    nudges_after_model = True

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: _RunState, runtime: Any) -> dict[str, Any] | None:
        messages = state["messages"]
        last = messages[-1] if messages else None
        if isinstance(last, AIMessage) and not last.tool_calls:
            return self._nudge_or_stop(state)
        return None

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: _RunState, runtime: Any) -> dict[str, Any] | None:
        reason, _ = self.end_reason(state, state["messages"])
        if reason is not None:
            return {"jump_to": "end", "ended_by": reason.value}
        return None


def _end_turn(reason: EndReason, counts: _Counts) -> ExtendedModelResponse[Any]:
    """A model turn that adds nothing and ends the run (the model is not called)."""
    return ExtendedModelResponse(
        model_response=ModelResponse(result=[]),
        command=Command(
            update={"jump_to": "end", "ended_by": reason.value, "casework_counts": counts}
        ),
    )


def _recount(messages: Sequence[BaseMessage], tail: int) -> _Counts:
    """Counts rebuilt from the run's messages (before the tail the caller adds), for a thread
    checkpointed before counts were kept."""
    run = _run_messages(messages[: len(messages) - tail])
    ai = [m for m in run if isinstance(m, AIMessage)]
    return {
        "model_calls": len(ai),
        "tool_calls": sum(isinstance(m, ToolMessage) for m in run),
        "tokens": sum(_tokens(m) for m in ai),
        "cost_usd": sum(_cost(m) for m in ai),
    }


def tool_failure(call: ToolCall, exc: Exception) -> ToolMessage:
    """The observation the model reads when a tool fails: the one rule for every app's tools.

    ``SourceUnavailable`` (a store, index or service cannot answer) is an observation, not an
    error: ``{"status": "unavailable", "source", "reason"}`` as JSON, so the model can go on
    with other sources. ``ToolRetry`` is a correction in the tool's words. Anything else is an
    error observation naming the exception. None of them ends the run.
    """
    name, call_id = call["name"], call["id"] or ""
    if isinstance(exc, SourceUnavailable):
        body = {"status": "unavailable", "source": exc.source, "reason": exc.reason}
        return ToolMessage(json.dumps(body), tool_call_id=call_id, name=name)
    if isinstance(exc, ToolRetry):
        text = str(exc)
    else:
        text = f"Error: {name} failed ({type(exc).__name__}: {exc}). Try another source."
    return ToolMessage(text, tool_call_id=call_id, name=name, status="error")


def _cost(message: AIMessage) -> float:
    price = price_for(message.response_metadata.get("model_name"))
    if not price:
        return 0.0
    meta = message.usage_metadata
    if meta is None:
        return 0.0
    return (meta["input_tokens"] * price[0] + meta["output_tokens"] * price[1]) / 1e6


def _tokens(message: AIMessage) -> int:
    return message.usage_metadata["total_tokens"] if message.usage_metadata else 0


def _is_submit(message: BaseMessage, submit_name: str) -> bool:
    return (
        isinstance(message, ToolMessage)
        and message.name == submit_name
        and message.status != "error"
    )


RECORDED_OUTPUT_CHARS = 2000
"""A tool output as kept in a run's records (traces and reports keep the whole message)."""


def _records(messages: Sequence[BaseMessage]) -> list[ToolCallRecord]:
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    records = []
    for m in messages:
        if isinstance(m, AIMessage):
            for call in m.tool_calls:
                res = results.get(call["id"] or "")
                records.append(
                    ToolCallRecord(
                        name=call["name"],
                        args=dict(call["args"]),
                        id=call["id"] or "",
                        ok=res is not None and res.status != "error",
                        output=str(res.content) if res is not None else "",
                    )
                )
    return records


def _default_fallback(decision_model: type[BaseModel]) -> Callable[[str], BaseModel]:
    def fallback(reason: str) -> BaseModel:
        fields = decision_model.model_fields
        data: dict[str, Any] = {}
        for key in ("verdict", "decision", "status"):
            if key in fields:
                data[key] = Verdict.NEEDS_REVIEW.value
                break
        if "confidence" in fields:
            data["confidence"] = 0
        if "reasoning" in fields:
            data["reasoning"] = (
                f"The run ended before a decision ({reason}); a person should review it."
            )
        return decision_model.model_validate(data)

    return fallback


class ReactAgent(Generic[DecisionT]):
    """A ReAct agent that ends by calling a submit tool with a ``DecisionT``.

    Args:
        model: a chat model with ``bind_tools`` (see ``casework.llm.resolve_model``).
        tools: LangChain tools. Ids the model must not choose come from ``ToolRuntime.context``.
        decision_model: pydantic model of the final decision; it is the submit tool's schema.
        system_prompt: the agent's instructions.
        context_schema: type of the run context (a dataclass) the tools read.
        limits: model/tool calls, tokens, cost, seconds; ``Settings.limits`` by default.
        tool_caps: per-tool call caps; a capped tool answers with an error the model sees.
        fallback: builds the decision when a run ends without one (limit, budget, no submit).
        approvals: ``{tool_name: True | {"allowed_decisions": [...]}}`` pauses before those tools.
        checkpointer: a LangGraph checkpointer; required for approvals and resume.
        trace_dir: where JSONL traces go; ``None`` disables traces.
        durability: LangGraph checkpoint durability (``sync`` survives a killed process).
    """

    def __init__(
        self,
        *,
        model: BaseChatModel,
        tools: Sequence[BaseTool | Callable[..., Any]],
        decision_model: type[DecisionT],
        system_prompt: str,
        name: str = "agent",
        submit_name: str = "submit_decision",
        submit_description: str | None = None,
        context_schema: type | None = None,
        limits: Limits | None = None,
        tool_caps: dict[str, int] | None = None,
        fallback: Callable[[str], DecisionT] | None = None,
        approvals: dict[str, Any] | None = None,
        checkpointer: Any = None,
        middleware: Sequence[AgentMiddleware] = (),
        trace_dir: Path | None = None,
        durability: str = "sync",
    ) -> None:
        self.name = name
        # "sync": each step is on disk before the next starts, so a killed process resumes
        # from its last step (LangGraph's default "async" can lose the last writes).
        self._durability: Any = durability if checkpointer is not None else None
        self.model = model
        self.decision_model = decision_model
        self.submit_name = submit_name
        self.limits = limits or Limits()
        self.fallback = fallback or cast(
            Callable[[str], DecisionT], _default_fallback(decision_model)
        )
        self.trace_dir = trace_dir
        self.checkpointer = checkpointer
        submit = StructuredTool.from_function(
            func=lambda **kwargs: "Decision recorded.",
            name=submit_name,
            description=submit_description
            or f"Submit your final decision. Call this exactly once, when you are done. {decision_model.__doc__ or ''}".strip(),
            args_schema=decision_model,
        )
        self.tools = [*tools, submit]
        others: list[AgentMiddleware[Any, Any]] = [
            ToolCallLimitMiddleware(tool_name=tool_name, run_limit=cap, exit_behavior="continue")
            for tool_name, cap in (tool_caps or {}).items()
        ]
        if approvals:
            others.append(HumanInTheLoopMiddleware(interrupt_on=approvals))
        others.extend(middleware)
        guarded = any(_overrides(m, "after_model") or _overrides(m, "aafter_model") for m in others)
        own = (_GuardedCaseworkMiddleware if guarded else _CaseworkMiddleware)(
            limits=self.limits, submit_name=submit_name
        )
        self.graph = build_react_graph(
            model,
            self.tools,
            system_prompt=system_prompt,
            middleware=[own, *others],
            untraced={own.name},
            context_schema=context_schema,
            checkpointer=checkpointer,
            name=name,
        )

    # ------------------------------------------------------------------ running
    def _start(
        self,
        input: str | list[BaseMessage] | Command[Any] | None,
        thread_id: str | None,
        trace: bool,
    ) -> _Run[DecisionT]:
        if isinstance(input, str):
            payload: Any = {"messages": [HumanMessage(input)], **_CaseworkMiddleware.run_start()}
        elif isinstance(input, list):
            payload = {"messages": input, **_CaseworkMiddleware.run_start()}
        else:
            payload = input
        run = Run(
            self.name,
            model=model_name(self.model),
            trace_dir=self.trace_dir if trace else None,
            thread_id=thread_id,
            payload=payload,
        )
        return _Run(self, payload, run)

    def iter_events(
        self,
        input: str | list[BaseMessage] | Command[Any] | None,
        *,
        context: Any = None,
        thread_id: str | None = None,
        trace: bool = True,
    ) -> Iterator[Event]:
        """Run and yield the flat event stream; the last event is ``complete``."""
        run = self._start(input, thread_id, trace)
        # The sync tool node opens a thread pool per step; its size given here spares it
        # a cpu_count() per step (a /sys read, ~35 us) and is the size it picks by default.
        config: RunnableConfig = {**run.config, "max_concurrency": TOOL_THREADS}
        try:
            for mode, chunk in self.graph.stream(
                run.payload,
                config,
                context=context,
                stream_mode=_STREAM_MODES,
                durability=self._durability,
            ):
                yield from run.feed(mode, chunk)
        except _RUN_ENDING as exc:
            run.failed(exc, self._state_values(run.config))
        yield run.complete()

    async def aiter_events(
        self,
        input: str | list[BaseMessage] | Command[Any] | None,
        *,
        context: Any = None,
        thread_id: str | None = None,
        trace: bool = True,
    ) -> AsyncIterator[Event]:
        """Async twin of ``iter_events``; the run's logic lives in ``_Run``, shared by both."""
        run = self._start(input, thread_id, trace)
        try:
            async for mode, chunk in self.graph.astream(
                run.payload,
                run.config,
                context=context,
                stream_mode=_STREAM_MODES,
                durability=self._durability,
            ):
                for event in run.feed(mode, chunk):
                    yield event
        except _RUN_ENDING as exc:
            run.failed(exc, await self._astate_values(run.config))
        yield run.complete()

    def run(
        self,
        input: str | list[BaseMessage],
        *,
        context: Any = None,
        thread_id: str | None = None,
        trace: bool = True,
    ) -> RunResult[DecisionT]:
        """Run to a decision (or to a pending approval) and return the result."""
        return _last(self.iter_events(input, context=context, thread_id=thread_id, trace=trace))

    async def arun(
        self,
        input: str | list[BaseMessage],
        *,
        context: Any = None,
        thread_id: str | None = None,
        trace: bool = True,
    ) -> RunResult[DecisionT]:
        last: Any = None
        async for event in self.aiter_events(
            input, context=context, thread_id=thread_id, trace=trace
        ):
            last = event
        result: RunResult[DecisionT] = last["result"]
        return result

    def resume(
        self,
        thread_id: str,
        decisions: list[dict[str, Any]],
        *,
        context: Any = None,
        trace: bool = True,
    ) -> RunResult[DecisionT]:
        """Answer a pending approval: one ``{"type": "approve"|"edit"|"reject", ...}`` per action."""
        command: Command[Any] = Command(resume={"decisions": decisions})
        return _last(self.iter_events(command, context=context, thread_id=thread_id, trace=trace))

    def _state_values(self, config: RunnableConfig) -> dict[str, Any] | None:
        if self.checkpointer is None:
            return None
        return self.graph.get_state(config).values

    async def _astate_values(self, config: RunnableConfig) -> dict[str, Any] | None:
        if self.checkpointer is None:
            return None
        return (await self.graph.aget_state(config)).values


TOOL_THREADS = min(32, (os.cpu_count() or 1) + 4)
"""ThreadPoolExecutor's default size, computed once per process instead of once per step."""
# "values" keeps the latest state for the result; "updates" feeds the event stream.
_STREAM_MODES: list[Any] = ["updates", "values"]
# A run that hits these ends like a limit (with the fallback decision), not with a traceback.
_RUN_ENDING = (GraphRecursionError, ModelError)


class _Run(Generic[DecisionT]):
    """What a ReAct run means, fed by the sync and the async stream alike: the state it
    reached, how it ended and its decision; the bookkeeping is the harness's ``Run``."""

    def __init__(self, agent: ReactAgent[DecisionT], payload: Any, run: Run) -> None:
        self.agent = agent
        self.payload = payload
        self.run = run
        self.config = run.config(recursion_limit=agent.limits.recursion_limit)
        self.values: dict[str, Any] = {}
        self.ended_by: EndReason | None = None
        self.detail = ""

    def feed(self, mode: str, chunk: Any) -> list[Event]:
        """The events of one stream chunk (``values`` chunks only update the state)."""
        if mode == "values":
            self.values = chunk
            return []
        return self.run.updates(chunk)

    def failed(self, exc: BaseException, checkpointed: dict[str, Any] | None) -> None:
        self.values = checkpointed or self.values
        if isinstance(exc, GraphRecursionError):
            self.ended_by = EndReason.LIMIT_RECURSION
        else:  # the model's output was unusable twice in a row
            self.ended_by, self.detail = EndReason.ERROR_MODEL, str(exc)[:300]

    def complete(self) -> Event:
        agent = self.agent
        messages = list(self.values.get("messages", []))
        run_msgs = _run_messages(messages)
        stored = self.values.get("ended_by")
        ended_by = self.ended_by or (EndReason(stored) if stored else EndReason.NO_DECISION)
        decision: DecisionT | None = None
        if any(_is_submit(m, agent.submit_name) for m in run_msgs):
            decision = _submitted_decision(run_msgs, agent.submit_name, agent.decision_model)
            if decision is not None:
                ended_by = EndReason.SUBMIT
        if self.run.interrupts:
            ended_by = EndReason.INTERRUPTED
        elif decision is None:
            reason = f"{ended_by}: {self.detail}" if self.detail else str(ended_by)
            decision = agent.fallback(reason)
        full = _records(run_msgs)  # whole outputs; the run's records keep a cut
        if isinstance(decision, Decision) and ended_by is EndReason.SUBMIT:
            # on whole outputs: a cited rider may sit past the records' cut
            decision.evidence = ground_evidence(decision.evidence, full)
        result = self.run.end(
            decision,
            ended_by,
            self.detail,
            messages=messages,
            tool_calls=[
                dataclasses.replace(c, output=c.output[:RECORDED_OUTPUT_CHARS]) for c in full
            ],
        )
        return {"type": "complete", "result": result}


def _submitted_decision(
    run_msgs: Sequence[BaseMessage], submit_name: str, decision_model: type[DecisionT]
) -> DecisionT | None:
    """The last valid decision the model submitted, if any."""
    for m in reversed(run_msgs):
        if isinstance(m, AIMessage):
            for call in m.tool_calls:
                if call["name"] == submit_name:
                    try:
                        return decision_model.model_validate(call["args"])
                    except ValidationError:
                        continue
    return None


def _last(events: Iterator[Event]) -> RunResult[Any]:
    last: Any = None
    for event in events:
        last = event
    # The last event is always ``complete``, whose "result" is the run's RunResult.
    result: RunResult[Any] = last["result"]
    return result
