"""Agent building blocks on LangGraph; knows no app."""

from casework.runtime.decision import Decision, EndReason, Evidence, RunInfo, Verdict
from casework.runtime.events import Event, to_json
from casework.runtime.harness import Run, RunResult, run_info
from casework.runtime.react import ReactAgent, ToolCallRecord
from casework.runtime.strategy import ModelSource, Strategy
from casework.runtime.usage import Usage

__all__ = [
    "Decision",
    "EndReason",
    "Event",
    "Evidence",
    "ModelSource",
    "ReactAgent",
    "Run",
    "RunInfo",
    "RunResult",
    "Strategy",
    "ToolCallRecord",
    "Usage",
    "Verdict",
    "run_info",
    "to_json",
]
