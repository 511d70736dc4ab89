"""The ReAct run's rules per step, as LangChain middleware the loop applies: the budgets
(model and tool calls, tokens, cost, seconds) checked inside the model call against counters
kept in the state, the submit guard (a run ends by its submit tool, nudged once), tool
failures returned to the model as observations (``tool_failure``: the one rule for every
app), and the records and fallback decision a run ends with. ``ReactAgent`` wires them."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, NotRequired, TypedDict, TypeVar

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
)
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelResponse,
    hook_config,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import BaseModel

from casework.config import Limits
from casework.errors import ModelError, SourceUnavailable, ToolRetry
from casework.runtime.decision import (
    EndReason,
    ToolCallRecord,
    Verdict,
)
from casework.runtime.usage import price_for

__all__ = [
    "RECORDED_OUTPUT_CHARS",
    "SUBMIT_NUDGE",
    "CaseworkMiddleware",
    "GuardedCaseworkMiddleware",
    "default_fallback",
    "is_submit",
    "overrides_hook",
    "run_messages",
    "tool_failure",
    "tool_records",
]

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


def run_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
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


def overrides_hook(mw: AgentMiddleware, hook: str) -> bool:
    return getattr(type(mw), hook) is not getattr(AgentMiddleware, hook)


class CaseworkMiddleware(AgentMiddleware[_RunState, Any]):
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
        if any(is_submit(m, self.submit_name) for m in tail):
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


class GuardedCaseworkMiddleware(CaseworkMiddleware):
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
    run = run_messages(messages[: len(messages) - tail])
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


def is_submit(message: BaseMessage, submit_name: str) -> bool:
    return (
        isinstance(message, ToolMessage)
        and message.name == submit_name
        and message.status != "error"
    )


RECORDED_OUTPUT_CHARS = 2000
"""A tool output as kept in a run's records (traces and reports keep the whole message)."""


def tool_records(messages: Sequence[BaseMessage]) -> list[ToolCallRecord]:
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


def default_fallback(decision_model: type[BaseModel]) -> Callable[[str], BaseModel]:
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
