"""`casework bench runtime` compares like with like: the same script, system prompt and tools,
both loops run the submit tool, and casework runs with its trace on. Ratios are `make bench`'s."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from casework.bench.runtime import (
    bare_graph,
    casework_agent,
    check_runtime_bench,
    run_runtime_bench,
)
from casework.runtime.traces import read_trace


def test_both_loops_run_the_same_conversation(tmp_path):
    bare = bare_graph(3).invoke({"messages": [HumanMessage("go")]})["messages"]
    result = casework_agent(3, tmp_path).run("go")
    for messages in (bare, result.messages):
        assert [type(m).__name__ for m in messages] == ["HumanMessage"] + [
            "AIMessage",
            "ToolMessage",
        ] * 4
        assert [m.name for m in messages if isinstance(m, ToolMessage)] == [
            "lookup",
            "lookup",
            "lookup",
            "submit_decision",
        ]
    assert not any(isinstance(m, SystemMessage) for m in bare)  # sent, not stored
    assert (result.ended_by, result.usage.model_calls, result.usage.tool_calls) == ("submit", 4, 4)
    records = read_trace(result.trace_path)
    assert [r["type"] for r in records] == ["run_start"] + ["tool", "tool_result"] * 4 + ["run_end"]
    assert sum(isinstance(m, AIMessage) for m in bare) == 4


def test_the_check_reads_the_median_cpu_ratio():
    result = run_runtime_bench(steps=3, repeats=1)
    assert result["steps"] == 3 and result["repeats"] == 1
    low, high = result["cpu_ratio_range"]
    assert 0 < low == result["ratio_vs_bare"] == high  # one pair: its ratio is the median
    assert check_runtime_bench({**result, "meets_target": True}) is None
    missed = {**result, "ratio_vs_bare": 1.5, "meets_target": False}
    assert check_runtime_bench(missed) == (
        "casework's run loop costs 1.50x bare LangGraph's CPU time per step (target <= 1.2x); "
        "profile it with cProfile on casework.bench.runtime."
    )
