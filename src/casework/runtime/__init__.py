"""Agent building blocks on LangGraph; knows no app.

The names below load on first use (PEP 562): ``casework.runtime.context`` and the other light
modules are imported on the way to every command's ``--help``, and importing this package must
not pull LangChain's agent factory in with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import lazy_names

if TYPE_CHECKING:
    from casework.runtime.decision import Decision, EndReason, Evidence, RunInfo, Verdict
    from casework.runtime.events import Event, to_json
    from casework.runtime.harness import Run, RunResult, run_info
    from casework.runtime.react import ReactAgent, ToolCallRecord
    from casework.runtime.runconfig import EventSink, RunConfig
    from casework.runtime.strategy import Strategy
    from casework.runtime.usage import Usage

_HOME = {
    "Decision": "decision",
    "EndReason": "decision",
    "Evidence": "decision",
    "RunInfo": "decision",
    "Verdict": "decision",
    "Event": "events",
    "to_json": "events",
    "Run": "harness",
    "RunResult": "harness",
    "run_info": "harness",
    "ReactAgent": "react",
    "ToolCallRecord": "react",
    "EventSink": "runconfig",
    "RunConfig": "runconfig",
    "Strategy": "strategy",
    "Usage": "usage",
}

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

__getattr__ = lazy_names("casework.runtime", _HOME)
