"""An SQL response as the platform's decision: the verdict (answered, refused, or a person's to
review), the evidence of its tables, validation and judge, and the tool steps as the run's
trajectory."""

from __future__ import annotations

import json
from typing import Any, Literal

from casework.apps.sql.models import SQLDecision, SQLQueryResponse
from casework.runtime import Evidence, RunInfo, RunResult
from casework.runtime.decision import ToolCallRecord
from casework.runtime.usage import Usage

__all__ = ["TOOL_STEPS", "decision_from_response"]


def decision_from_response(
    response: SQLQueryResponse, run: RunResult[Any] | None = None
) -> SQLDecision:
    """The platform decision of a response; with the harness's ``run`` behind it, its ids,
    trace and usage (every model call of the run, the judge's included, counted once)."""
    verdict: Literal["ANSWERED", "REFUSED", "NEEDS_REVIEW"]
    if response.refused:
        verdict = "REFUSED"
    elif response.query and response.valid:
        verdict = "ANSWERED"
    else:
        verdict = "NEEDS_REVIEW"
    evidence = [
        Evidence(source="retrieve_tables", ref=t, summary=f"table {t} used by the query")
        for t in response.tables_used
    ]
    if response.query:
        evidence.append(
            Evidence(
                source="validate_sql",
                ref=response.query[:200],
                summary="passed structural validation"
                if response.valid
                else "failed structural validation",
                fields={"errors": [e.message for e in response.validation_errors]},
            )
        )
    if response.judge_score is not None:
        evidence.append(
            Evidence(
                source="llm_judge_evaluate",
                ref=response.judge_model or "judge",
                summary=f"judge score {response.judge_score}",
            )
        )
    usage = (
        run.usage
        if run is not None
        else Usage(  # no harness run behind it: what the response reports
            model_calls=response.model_calls + response.judge_calls,
            tool_calls=sum(1 for s in response.reasoning_steps if s.get("kind") in TOOL_STEPS),
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            wall_seconds=response.seconds,
            cost_usd=response.cost_usd,
        )
    )
    info = RunInfo(
        ended_by=response.ended_by,
        detail=response.end_detail,
        strategy=response.strategy,
        model=response.model,
        run_id=run.run_id if run is not None else "",
        thread_id=run.thread_id if run is not None else "",
        tool_calls=_tool_calls(response),
        usage=usage,
        trace_path=run.trace_path if run is not None else None,
    )
    return SQLDecision(
        verdict=verdict,
        confidence=round(response.confidence * 100, 2),
        reasoning=response.explanation[:1200],
        evidence=evidence,
        response=response,
        run=info,
    )


TOOL_STEPS = ("retrieve_tables", "validate_sql", "llm_judge_evaluate", "execute_sql")
"""Kinds of reasoning step that are tool calls (the others: screen, final)."""


def _tool_calls(response: SQLQueryResponse) -> list[ToolCallRecord]:
    """The response's tool steps as the harness's trajectory (its path and redundancy
    metrics read these)."""
    calls: list[ToolCallRecord] = []
    for step in response.reasoning_steps:
        kind = step.get("kind")
        if kind not in TOOL_STEPS:
            continue
        args: dict[str, Any] = {k: step[k] for k in ("question", "query", "mode") if k in step}
        calls.append(
            ToolCallRecord(
                name=str(kind),
                args=args,
                id=str(step.get("step", len(calls) + 1)),
                ok="error" not in step,
                output=json.dumps(step, default=str)[:2000],
            )
        )
    return calls
