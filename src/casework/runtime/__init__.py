"""Agent building blocks on LangGraph; knows no app."""

from casework.runtime.decision import Decision, Evidence, Verdict
from casework.runtime.events import Event, to_json
from casework.runtime.react import ReactAgent, RunResult, ToolCallRecord
from casework.runtime.usage import Usage

__all__ = [
    "Decision",
    "Event",
    "Evidence",
    "ReactAgent",
    "RunResult",
    "ToolCallRecord",
    "Usage",
    "Verdict",
    "to_json",
]
