"""``RunInfo`` for a ``ReactAgent`` run under a strategy's name and model label.

The runtime already fills ``decision.run``; strategies call this to name themselves and the
model they were given (the harness keys calibrations and reports by those).
"""

from __future__ import annotations

from typing import Any

from casework.runtime.decision import RunInfo
from casework.runtime.react import RunResult

__all__ = ["run_info"]


def run_info(result: RunResult[Any], *, strategy: str, model: str | None) -> RunInfo:
    """How a ``RunResult`` ended, with its tool calls, usage and trace."""
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
