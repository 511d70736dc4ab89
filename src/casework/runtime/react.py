"""The ReAct builder every tool-using agent in casework stands on.

``ReactAgent`` runs a ReAct graph (``casework.runtime.loop``: ``create_agent``'s shape and
middleware semantics, without its per-step extras) with what an evidence-based decision
needs: a terminal submit tool whose schema is the app's decision model, limits and budgets
that end a run cleanly with a NEEDS_REVIEW-style decision, tool failures returned to the model
as observations (``react_steps.tool_failure``: the one rule for every app), human approval through
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
import os
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ToolCallLimitMiddleware,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphRecursionError
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from casework.config import Limits
from casework.errors import ModelError
from casework.runtime.decision import (
    Decision,
    EndReason,
    ToolCallRecord,
    ground_evidence,
)
from casework.runtime.events import Event
from casework.runtime.harness import Run, RunResult
from casework.runtime.loop import build_react_graph
from casework.runtime.react_steps import (
    RECORDED_OUTPUT_CHARS,
    CaseworkMiddleware,
    GuardedCaseworkMiddleware,
    default_fallback,
    is_submit,
    overrides_hook,
    run_messages,
    tool_records,
)
from casework.runtime.runconfig import RunConfig

__all__ = ["ReactAgent", "ToolCallRecord"]

DecisionT = TypeVar("DecisionT", bound=BaseModel)


class ReactAgent(Generic[DecisionT]):
    """A ReAct agent that ends by calling a submit tool with a ``DecisionT``.

    Args:
        config: the run config: the model of ``role`` (``config.models(role)``, a chat model
            with ``bind_tools``), the budgets (``config.limits``; ``Limits()`` when None) and
            the JSONL trace folder (``config.traces``; None: no trace).
        role: the model role the agent runs on.
        tools: LangChain tools. Ids the model must not choose come from ``ToolRuntime.context``.
        decision_model: pydantic model of the final decision; it is the submit tool's schema.
        system_prompt: the agent's instructions.
        context_schema: type of the run context (a dataclass) the tools read.
        tool_caps: per-tool call caps; a capped tool answers with an error the model sees.
        fallback: builds the decision when a run ends without one (limit, budget, no submit).
        approvals: ``{tool_name: True | {"allowed_decisions": [...]}}`` pauses before those tools.
        checkpointer: a LangGraph checkpointer; required for approvals and resume.
        durability: LangGraph checkpoint durability (``sync`` survives a killed process).
    """

    def __init__(
        self,
        *,
        config: RunConfig,
        role: str,
        tools: Sequence[BaseTool | Callable[..., Any]],
        decision_model: type[DecisionT],
        system_prompt: str,
        name: str = "agent",
        submit_name: str = "submit_decision",
        submit_description: str | None = None,
        context_schema: type | None = None,
        tool_caps: dict[str, int] | None = None,
        fallback: Callable[[str], DecisionT] | None = None,
        approvals: dict[str, Any] | None = None,
        checkpointer: Any = None,
        middleware: Sequence[AgentMiddleware] = (),
        durability: str = "sync",
    ) -> None:
        self.name = name
        # "sync": each step is on disk before the next starts, so a killed process resumes
        # from its last step (LangGraph's default "async" can lose the last writes).
        self._durability: Any = durability if checkpointer is not None else None
        self.config = config
        self.role = role
        self.model = model = config.models(role)
        self.decision_model = decision_model
        self.submit_name = submit_name
        self.limits = config.limits or Limits()
        self.fallback = fallback or cast(
            Callable[[str], DecisionT], default_fallback(decision_model)
        )
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
        guarded = any(
            overrides_hook(m, "after_model") or overrides_hook(m, "aafter_model") for m in others
        )
        own = (GuardedCaseworkMiddleware if guarded else CaseworkMiddleware)(
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
            payload: Any = {"messages": [HumanMessage(input)], **CaseworkMiddleware.run_start()}
        elif isinstance(input, list):
            payload = {"messages": input, **CaseworkMiddleware.run_start()}
        else:
            payload = input
        run = self.config.run(
            self.name, self.role, thread_id=thread_id, payload=payload, trace=trace
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
        run_msgs = run_messages(messages)
        stored = self.values.get("ended_by")
        ended_by = self.ended_by or (EndReason(stored) if stored else EndReason.NO_DECISION)
        decision: DecisionT | None = None
        if any(is_submit(m, agent.submit_name) for m in run_msgs):
            decision = _submitted_decision(run_msgs, agent.submit_name, agent.decision_model)
            if decision is not None:
                ended_by = EndReason.SUBMIT
        if self.run.interrupts:
            ended_by = EndReason.INTERRUPTED
        elif decision is None:
            reason = f"{ended_by}: {self.detail}" if self.detail else str(ended_by)
            decision = agent.fallback(reason)
        full = tool_records(run_msgs)  # whole outputs; the run's records keep a cut
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
