"""A SQL decision's run carries the trajectory and usage the harness's metrics read."""

from __future__ import annotations

from dataclasses import replace

from casework.apps.sql.decisions import decision_from_response
from casework.apps.sql.models import SQLQueryResponse


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


def test_a_model_run_is_the_harness_s_its_trace_ids_and_usage_on_the_decision(make_deps) -> None:
    """The single pass asks its model under the runtime's harness: the decision names the
    run's trace and ids, and the v2 judge's call (inside the ReAct run) is counted once."""
    from casework.apps.sql.strategies import STRATEGIES
    from casework.llm import call
    from casework.runtime import EndReason
    from casework.runtime.traces import read_trace

    good = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical'"
    question = "How many critical alerts are there?"
    submit = call("submit_answer", query=good, explanation="Counts them.", confidence=0.9)
    deps, config, _, _ = make_deps(agent=[submit])
    config = replace(config, traces=deps.settings.traces_dir)
    decided = STRATEGIES["keyword"](question, deps, config)
    run = decided.run
    assert run is not None and run.ended_by is EndReason.SUBMIT and run.detail == ""
    records = read_trace(run.trace_path)
    assert run.trace_path.name == f"sql_keyword-{run.run_id}.jsonl"
    assert [(r["type"], r.get("tool")) for r in records] == [
        ("run_start", None),
        ("tool", "submit_answer"),
        ("run_end", None),
    ]
    assert records[0]["payload"] == {"question": question} and records[0]["strategy"] == "keyword"
    assert records[-1]["result"]["query"] == good and records[-1]["ended_by"] == "submit"
    assert (run.usage.model_calls, decided.response.model_calls) == (1, 1)
    assert run.usage.total_tokens == decided.response.input_tokens + decided.response.output_tokens

    judged, judged_config, _, _ = make_deps(
        agent=[
            call("validate_sql", query=good),
            call("llm_judge_evaluate", query=good, question=question),
            submit,
        ],
        judge=[
            call(
                "submit_evaluation",
                is_correct=True,
                correctness_score=0.9,
                issues=[],
                suggestions=[],
                reasoning="ok",
            )
        ],
    )
    v2 = STRATEGIES["v2"](question, judged, replace(judged_config, traces=deps.settings.traces_dir))
    assert (v2.response.model_calls, v2.response.judge_calls) == (4, 1)
    assert v2.run.usage.model_calls == 4  # three agent turns and the judge, once each
    assert read_trace(v2.run.trace_path)[0]["agent"] == "sql_v2"


def test_a_model_error_is_typed_with_its_text_apart(make_deps) -> None:
    from casework.apps.sql.strategies import STRATEGIES
    from casework.errors import ModelError
    from casework.runtime import EndReason

    def broken(messages):
        raise ModelError("output cut off at max_tokens")

    deps, config, _, _ = make_deps(agent=[broken])
    decided = STRATEGIES["keyword"]("How many critical alerts are there?", deps, config)
    assert decided.response.ended_by is EndReason.ERROR_MODEL
    assert decided.run.ended_by is EndReason.ERROR_MODEL
    assert decided.run.detail == decided.response.end_detail == "output cut off at max_tokens"
    assert decided.response.explanation == (
        "No valid query was found before the run ended (error:model (output cut off at max_tokens))."
    )
