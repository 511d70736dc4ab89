"""``RunInfo`` from a ``ReactAgent`` run, until the agent fills ``decision.run`` itself."""

from __future__ import annotations

from typing import Any

from casework.runtime.decision import EndReason, RunInfo

__all__ = ["end_reason", "run_info"]


def end_reason(ended_by: str) -> tuple[EndReason, str]:
    """``error:model (bad JSON)`` -> (``EndReason.ERROR_MODEL``, ``bad JSON``)."""
    head, _, rest = str(ended_by).partition(" ")
    try:
        return EndReason(head), rest.strip().removeprefix("(").removesuffix(")")
    except ValueError:
        return EndReason.NO_DECISION, str(ended_by)


def run_info(result: Any, *, strategy: str, model: str | None) -> RunInfo:
    """How a ``RunResult`` ended, with its tool calls, usage and trace."""
    if isinstance(result.ended_by, EndReason):
        reason, detail = result.ended_by, getattr(result, "detail", "")
    else:
        reason, detail = end_reason(result.ended_by)
    return RunInfo(
        ended_by=reason,
        detail=detail,
        strategy=strategy,
        model=model,
        run_id=result.run_id,
        thread_id=result.thread_id,
        tool_calls=list(result.tool_calls),
        usage=result.usage,
        trace_path=result.trace_path,
        interrupts=list(result.interrupts),
    )
