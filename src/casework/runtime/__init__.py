"""Agent building blocks on LangGraph; knows no app."""

from casework.runtime.decision import Decision, EndReason, Evidence, RunInfo, Verdict
from casework.runtime.events import Event, to_json
from casework.runtime.harness import Run, RunResult, run_info
from casework.runtime.react import ReactAgent, ToolCallRecord
from casework.runtime.runconfig import EventSink, RunConfig
from casework.runtime.strategy import Strategy
from casework.runtime.usage import Usage

__all__ = [
    "Decision",
    "EndReason",
    "Event",
    "EventSink",
    "Evidence",
    "ReactAgent",
    "Run",
    "RunConfig",
    "RunInfo",
    "RunResult",
    "Strategy",
    "ToolCallRecord",
    "Usage",
    "Verdict",
    "run_info",
    "to_json",
]
