"""A SQL decision's run carries the trajectory and usage the harness's metrics read."""

from __future__ import annotations

from casework.apps.sql.models import SQLQueryResponse
from casework.apps.sql.strategies import decision_from_response


def test_reasoning_steps_become_the_runs_tool_calls_and_usage() -> None:
    response = SQLQueryResponse(
        question="How many alerts?",
        query="SELECT COUNT(*) FROM alerts",
        explanation="Counts alerts.",
        confidence=0.8,
        confidence_source="judge",
        valid=True,
        strategy="v2",
        ended_by="submit",
        model_calls=4,
        judge_calls=1,
        input_tokens=900,
        output_tokens=60,
        seconds=12.5,
        reasoning_steps=[
            {
                "step": 1,
                "kind": "retrieve_tables",
                "question": "How many alerts?",
                "mode": "keyword",
            },
            {
                "step": 2,
                "kind": "validate_sql",
                "query": "SELECT COUNT(*) FROM alerts",
                "valid": True,
            },
            {
                "step": 3,
                "kind": "llm_judge_evaluate",
                "query": "SELECT 1",
                "error": "no usable evaluation",
            },
            {"step": 4, "kind": "final", "outcome": "answered"},
        ],
    )
    run = decision_from_response(response).run
    assert run is not None
    assert [c.name for c in run.tool_calls] == [
        "retrieve_tables",
        "validate_sql",
        "llm_judge_evaluate",
    ]
    assert [c.ok for c in run.tool_calls] == [True, True, False]
    assert run.tool_calls[0].args == {"question": "How many alerts?", "mode": "keyword"}
    assert (run.usage.model_calls, run.usage.tool_calls, run.usage.total_tokens) == (5, 3, 960)
    assert run.usage.wall_seconds == 12.5
