"""One run's bookkeeping, whatever drives it: ``ReactAgent``'s loop, hed's annotation graph,
or a strategy that asks a model directly (a single pass, self-consistency, a choice layer).

A ``Run`` owns the run and thread ids, the usage (a ``UsageCallback`` for the calls LangChain
sees, ``count`` for the others: tokens, model calls, cost), the JSONL trace (``run_start``,
one record per event, ``run_end``), the events' shape (``casework.runtime.events``) and the
end: a typed ``EndReason`` and its detail into a ``RunResult`` and, when the decision is a
``Decision``, its ``RunInfo``. The driver decides what happened; the run writes it down the
same way for every driver, so traces, usage and events read alike across apps.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from casework.runtime.decision import Decision, EndReason, RunInfo, ToolCallRecord
from casework.runtime.events import Event, events_from_update
from casework.runtime.traces import TraceWriter
from casework.runtime.usage import Usage, UsageCallback

__all__ = ["Run", "RunResult", "run_info"]

DecisionT = TypeVar("DecisionT", bound=BaseModel)


@dataclass
class RunResult(Generic[DecisionT]):
    """What a run returns: the decision and everything needed to explain and measure it."""

    run_id: str
    thread_id: str
    decision: DecisionT | None
    ended_by: EndReason
    detail: str = ""
    """More on ``ended_by``: the model error's text, for ``error:model``."""
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


def run_info(result: RunResult[Any], *, strategy: str, model: str | None) -> RunInfo:
    """How a ``RunResult`` ended, with its tool calls, usage and trace, under a strategy's
    name and model label (calibrations and reports are keyed by those)."""
    return RunInfo(
        ended_by=result.ended_by,
        detail=result.detail,
        strategy=strategy,
        model=model,
        run_id=result.run_id,
        thread_id=result.thread_id,
        tool_calls=list(result.tool_calls),
        usage=result.usage,
        trace_path=result.trace_path,
        interrupts=list(result.interrupts),
    )


class Run:
    """One run, from its start to its ``RunResult``.

    Args:
        agent: the name traces, usage nodes and file names carry (``<agent>-<run_id>.jsonl``).
        model: the model's label, named in the trace and the ``RunInfo``.
        strategy: the strategy the ``RunInfo`` names (a ReAct run leaves it to its caller).
        trace_dir: where the JSONL trace goes; ``None`` writes none.
        thread_id: the checkpointer's thread (a resumed run keeps its own); the run id by default.
        payload: the run's input, as the trace's ``run_start`` keeps it.
    """

    def __init__(
        self,
        agent: str,
        *,
        model: str | None = None,
        strategy: str = "",
        trace_dir: Path | None = None,
        thread_id: str | None = None,
        payload: Any = None,
    ) -> None:
        self.agent = agent
        self.model = model
        self.strategy = strategy
        self.run_id = uuid.uuid4().hex[:12]
        self.thread_id = thread_id or self.run_id
        self.callback = UsageCallback()
        self.interrupts: list[Any] = []
        self.started = time.perf_counter()
        self.trace: TraceWriter | None = None
        if trace_dir is not None:
            self.trace = TraceWriter(trace_dir / f"{agent}-{self.run_id}.jsonl")
            start: dict[str, Any] = {"strategy": strategy} if strategy else {}
            self.trace.start(
                run_id=self.run_id,
                thread_id=self.thread_id,
                agent=agent,
                model=model,
                payload=payload,
                **start,
            )

    @property
    def usage(self) -> Usage:
        return self.callback.usage

    def config(self, **extra: Any) -> RunnableConfig:
        """The LangChain config of the run's calls: its usage callback, thread and ids."""
        config: RunnableConfig = {
            "configurable": {"thread_id": self.thread_id},
            "callbacks": [self.callback],
            "metadata": {"casework_run_id": self.run_id, "casework_agent": self.agent},
        }
        config.update(extra)  # type: ignore[typeddict-item]
        return config

    def count(self, usage: Usage) -> None:
        """Add model calls LangChain's callbacks do not see (constrained decoding, option
        scoring on the bundled model); their time is the run's, measured at its end."""
        self.usage.add(usage)

    def record(self, event: Event) -> Event:
        """Keep one event of the run's stream (in the trace; an interrupt also in the run)."""
        if event["type"] == "interrupt":
            self.interrupts.extend(event["interrupts"])
        if self.trace is not None:
            self.trace.event(event)
        return event

    def updates(self, update: dict[str, Any]) -> list[Event]:
        """The events of one LangGraph ``updates`` chunk (or ``{node: {"messages": [...]}}``
        for a model asked directly), each recorded."""
        return [self.record(e) for e in events_from_update(update)]

    def end(
        self,
        decision: DecisionT | None,
        ended_by: EndReason,
        detail: str = "",
        *,
        messages: Sequence[BaseMessage] = (),
        tool_calls: Sequence[ToolCallRecord] = (),
    ) -> RunResult[DecisionT]:
        """The run's result; a ``Decision`` gets its ``RunInfo``; the trace is closed."""
        usage = self.usage
        usage.wall_seconds = time.perf_counter() - self.started
        result: RunResult[DecisionT] = RunResult(
            run_id=self.run_id,
            thread_id=self.thread_id,
            decision=decision,
            ended_by=ended_by,
            detail=detail,
            messages=list(messages),
            tool_calls=list(tool_calls),
            usage=usage,
            interrupts=self.interrupts,
            trace_path=self.trace.path if self.trace is not None else None,
        )
        if isinstance(decision, Decision):
            decision.run = run_info(result, strategy=self.strategy, model=self.model)
        if self.trace is not None:
            self.trace.end(result)
        return result
