"""The ReAct builder every tool-using agent in casework stands on.

``ReactAgent`` wraps ``langchain.agents.create_agent`` with what an evidence-based decision
needs: a terminal submit tool whose schema is the app's decision model, limits and budgets
that end a run cleanly with a NEEDS_REVIEW-style decision, tool errors returned to the model
instead of raised, human approval through interrupts, usage accounting, a flat event stream
and a JSONL trace. The definition (``ReactAgent(...)``) is separate from the run
(``run`` / ``arun`` / ``stream`` / ``resume``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, NotRequired, TypeVar

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    HumanInTheLoopMiddleware,
    ToolCallLimitMiddleware,
)
from langchain.agents.middleware.types import hook_config
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp, GraphRecursionError
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from casework.config import Limits
from casework.errors import ModelError, ToolRetry
from casework.runtime.decision import ToolCallRecord, Verdict
from casework.runtime.events import Event, events_from_update
from casework.runtime.traces import TraceWriter
from casework.runtime.usage import Usage, UsageCallback, price_for

__all__ = ["ReactAgent", "RunResult", "ToolCallRecord"]

DecisionT = TypeVar("DecisionT", bound=BaseModel)

SUBMIT_NUDGE = (
    "You have not submitted a decision. Call {submit} now with your decision, confidence and "
    "reasoning, using the evidence gathered so far."
)


@dataclass
class RunResult(Generic[DecisionT]):
    """What a run returns: the decision and everything needed to explain and measure it."""

    run_id: str
    thread_id: str
    decision: DecisionT | None
    ended_by: str
    """``submit``, ``limit:model_calls``, ``limit:tool_calls``, ``limit:recursion``,
    ``budget:tokens``, ``budget:cost``, ``budget:seconds``, ``no_decision``, ``interrupted``
    or ``error:model (...)`` (the model's output was unusable twice in a row)."""
    messages: list[BaseMessage] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    interrupts: list[Any] = field(default_factory=list)
    trace_path: Path | None = None

    @property
    def interrupted(self) -> bool:
        return bool(self.interrupts)

    @property
    def tool_names(self) -> list[str]:
        return [c.name for c in self.tool_calls]


class _RunState(AgentState):
    ended_by: NotRequired[str]
    run_started_at: NotRequired[float]
    nudges: NotRequired[int]


def _run_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Messages since the last human turn that started this run."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, HumanMessage) and not m.additional_kwargs.get("casework_nudge"):
            return list(messages[i + 1 :])
    return list(messages)


class _CaseworkMiddleware(AgentMiddleware):
    """Limits, budgets, the submit stop, and tool errors sent back to the model."""

    state_schema = _RunState

    def __init__(self, *, limits: Limits, submit_name: str, max_nudges: int = 1) -> None:
        super().__init__()
        self.limits = limits
        self.submit_name = submit_name
        self.max_nudges = max_nudges

    @property
    def name(self) -> str:
        return "casework"

    def before_agent(self, state: _RunState, runtime: Any) -> dict[str, Any] | None:
        return {"run_started_at": time.time(), "nudges": 0}

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: _RunState, runtime: Any) -> dict[str, Any] | None:
        messages = _run_messages(state["messages"])
        if _submitted(messages, self.submit_name):
            return {"jump_to": "end", "ended_by": "submit"}
        reason = self._exceeded(messages, state.get("run_started_at"))
        if reason:
            return {"jump_to": "end", "ended_by": reason}
        return None

    @hook_config(can_jump_to=["model", "end"])
    def after_model(self, state: _RunState, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and not last.tool_calls:
            nudges = state.get("nudges", 0)
            if nudges >= self.max_nudges:
                return {"jump_to": "end", "ended_by": "no_decision"}
            nudge = HumanMessage(
                SUBMIT_NUDGE.format(submit=self.submit_name),
                additional_kwargs={"casework_nudge": True},
            )
            return {"messages": [nudge], "nudges": nudges + 1, "jump_to": "model"}
        return None

    def _exceeded(self, messages: list[BaseMessage], started: float | None) -> str | None:
        lim = self.limits
        ai = [m for m in messages if isinstance(m, AIMessage)]
        if len(ai) >= lim.max_model_calls:
            return "limit:model_calls"
        if sum(isinstance(m, ToolMessage) for m in messages) >= lim.max_tool_calls:
            return "limit:tool_calls"
        if lim.max_tokens is not None:
            tokens = sum((m.usage_metadata or {}).get("total_tokens", 0) for m in ai)
            if tokens >= lim.max_tokens:
                return "budget:tokens"
        if lim.max_cost_usd is not None and _cost(ai) >= lim.max_cost_usd:
            return "budget:cost"
        if lim.max_seconds is not None and started and time.time() - started >= lim.max_seconds:
            return "budget:seconds"
        return None

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(request)
        except ModelError:  # a small model's malformed turn: one more try, then give up
            return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return await handler(request)
        except ModelError:
            return await handler(request)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return _tool_error(request, exc)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return _tool_error(request, exc)


def _tool_error(request: Any, exc: Exception) -> ToolMessage:
    call = request.tool_call
    if isinstance(exc, ToolRetry):
        text = str(exc)
    else:
        text = f"Error: {call['name']} failed ({type(exc).__name__}: {exc}). Try another source."
    return ToolMessage(text, tool_call_id=call["id"], name=call["name"], status="error")


def _cost(ai_messages: list[AIMessage]) -> float:
    total = 0.0
    for m in ai_messages:
        price = price_for(m.response_metadata.get("model_name"))
        meta = m.usage_metadata or {}
        if price:
            total += (
                meta.get("input_tokens", 0) * price[0] + meta.get("output_tokens", 0) * price[1]
            ) / 1e6
    return total


def _submitted(messages: Sequence[BaseMessage], submit_name: str) -> bool:
    return any(
        isinstance(m, ToolMessage) and m.name == submit_name and m.status != "error"
        for m in messages
    )


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
                        output=str(res.content)[:2000] if res is not None else "",
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
        self._stream_kwargs = {"durability": durability} if checkpointer is not None else {}
        self.model = model
        self.decision_model = decision_model
        self.submit_name = submit_name
        self.limits = limits or Limits()
        self.fallback = fallback or _default_fallback(decision_model)
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
        mw: list[AgentMiddleware] = [
            _CaseworkMiddleware(limits=self.limits, submit_name=submit_name)
        ]
        for tool_name, cap in (tool_caps or {}).items():
            mw.append(
                ToolCallLimitMiddleware(
                    tool_name=tool_name, run_limit=cap, exit_behavior="continue"
                )
            )
        if approvals:
            mw.append(HumanInTheLoopMiddleware(interrupt_on=approvals))
        mw.extend(middleware)
        self.graph = create_agent(
            model,
            tools=self.tools,
            system_prompt=system_prompt,
            middleware=mw,
            context_schema=context_schema,
            checkpointer=checkpointer,
            name=name,
        )

    # ------------------------------------------------------------------ running
    def _prepare(
        self, input: str | list[BaseMessage] | Command | None, thread_id: str | None
    ) -> tuple[Any, dict[str, Any], UsageCallback, str, str]:
        run_id = uuid.uuid4().hex[:12]
        thread_id = thread_id or run_id
        callback = UsageCallback()
        config: dict[str, Any] = {
            "configurable": {"thread_id": thread_id},
            "callbacks": [callback],
            "recursion_limit": self.limits.recursion_limit,
            "metadata": {"casework_run_id": run_id, "casework_agent": self.name},
        }
        if isinstance(input, str):
            payload: Any = {"messages": [HumanMessage(input)]}
        elif isinstance(input, list):
            payload = {"messages": input}
        else:
            payload = input
        return payload, config, callback, run_id, thread_id

    def _finish(
        self,
        *,
        run_id: str,
        thread_id: str,
        values: dict[str, Any],
        interrupts: list[Any],
        callback: UsageCallback,
        started: float,
        recursion: bool,
        trace: TraceWriter | None,
    ) -> RunResult[DecisionT]:
        messages = list(values.get("messages", []))
        run_msgs = _run_messages(messages)
        decision: DecisionT | None = None
        ended_by = values.get("ended_by") or ("limit:recursion" if recursion else "no_decision")
        for m in reversed(run_msgs):
            if isinstance(m, AIMessage):
                for call in m.tool_calls:
                    if call["name"] == self.submit_name and _submitted(run_msgs, self.submit_name):
                        try:
                            decision = self.decision_model.model_validate(call["args"])
                        except ValidationError:
                            decision = None
                if decision is not None:
                    ended_by = "submit"
                    break
        if interrupts:
            ended_by = "interrupted"
        elif decision is None:
            decision = self.fallback(ended_by)  # type: ignore[assignment]
        usage = callback.usage
        usage.wall_seconds = time.perf_counter() - started
        result = RunResult(
            run_id=run_id,
            thread_id=thread_id,
            decision=decision,
            ended_by=ended_by,
            messages=messages,
            tool_calls=_records(run_msgs),
            usage=usage,
            interrupts=interrupts,
            trace_path=trace.path if trace else None,
        )
        if trace:
            trace.end(result)
        return result

    def _trace(self, run_id: str, thread_id: str, payload: Any, trace: bool) -> TraceWriter | None:
        if not (trace and self.trace_dir):
            return None
        writer = TraceWriter(self.trace_dir / f"{run_id}.jsonl")
        writer.start(
            run_id=run_id,
            thread_id=thread_id,
            agent=self.name,
            model=_model_name(self.model),
            payload=payload,
        )
        return writer

    def iter_events(
        self,
        input: str | list[BaseMessage] | Command | None,
        *,
        context: Any = None,
        thread_id: str | None = None,
        trace: bool = True,
    ) -> Iterator[Event]:
        """Run and yield the flat event stream; the last event is ``complete``."""
        payload, config, callback, run_id, thread_id = self._prepare(input, thread_id)
        writer = self._trace(run_id, thread_id, payload, trace)
        started = time.perf_counter()
        values: dict[str, Any] = {}
        interrupts: list[Any] = []
        recursion = False
        try:
            for mode, chunk in self.graph.stream(
                payload,
                config,
                context=context,
                stream_mode=["updates", "values"],
                **self._stream_kwargs,
            ):
                if mode == "values":
                    values = chunk
                    continue
                for event in events_from_update(chunk):
                    if event["type"] == "interrupt":
                        interrupts.extend(event["interrupts"])
                    if writer:
                        writer.event(event)
                    yield event
        except GraphRecursionError:
            recursion = True
            values = self._state_values(config) or values
        except ModelError as exc:
            # Unusable model output twice in a row: end like a limit, not with a traceback.
            values = {
                **(self._state_values(config) or values),
                "ended_by": f"error:model ({exc})"[:200],
            }
        result = self._finish(
            run_id=run_id,
            thread_id=thread_id,
            values=values,
            interrupts=interrupts,
            callback=callback,
            started=started,
            recursion=recursion,
            trace=writer,
        )
        yield {"type": "complete", "result": result}

    async def aiter_events(
        self,
        input: str | list[BaseMessage] | Command | None,
        *,
        context: Any = None,
        thread_id: str | None = None,
        trace: bool = True,
    ) -> AsyncIterator[Event]:
        """Async twin of ``iter_events``."""
        payload, config, callback, run_id, thread_id = self._prepare(input, thread_id)
        writer = self._trace(run_id, thread_id, payload, trace)
        started = time.perf_counter()
        values: dict[str, Any] = {}
        interrupts: list[Any] = []
        recursion = False
        try:
            async for mode, chunk in self.graph.astream(
                payload,
                config,
                context=context,
                stream_mode=["updates", "values"],
                **self._stream_kwargs,
            ):
                if mode == "values":
                    values = chunk
                    continue
                for event in events_from_update(chunk):
                    if event["type"] == "interrupt":
                        interrupts.extend(event["interrupts"])
                    if writer:
                        writer.event(event)
                    yield event
        except GraphRecursionError:
            recursion = True
            values = (await self._astate_values(config)) or values
        except ModelError as exc:
            values = {
                **((await self._astate_values(config)) or values),
                "ended_by": f"error:model ({exc})"[:200],
            }
        result = self._finish(
            run_id=run_id,
            thread_id=thread_id,
            values=values,
            interrupts=interrupts,
            callback=callback,
            started=started,
            recursion=recursion,
            trace=writer,
        )
        yield {"type": "complete", "result": result}

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
        return last["result"]

    def resume(
        self,
        thread_id: str,
        decisions: list[dict[str, Any]],
        *,
        context: Any = None,
        trace: bool = True,
    ) -> RunResult[DecisionT]:
        """Answer a pending approval: one ``{"type": "approve"|"edit"|"reject", ...}`` per action."""
        command = Command(resume={"decisions": decisions})
        return _last(self.iter_events(command, context=context, thread_id=thread_id, trace=trace))

    def _state_values(self, config: dict[str, Any]) -> dict[str, Any] | None:
        if self.checkpointer is None:
            return None
        return self.graph.get_state(config).values

    async def _astate_values(self, config: dict[str, Any]) -> dict[str, Any] | None:
        if self.checkpointer is None:
            return None
        return (await self.graph.aget_state(config)).values


def _last(events: Iterator[Event]) -> Any:
    last: Any = None
    for event in events:
        last = event
    return last["result"]


def _model_name(model: Any) -> str:
    for attr in ("model_name", "model", "name"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__
