"""Runtime overhead: the ReAct loop with a zero-latency scripted model vs bare LangGraph.

Both variants run the same scripted conversation (``steps`` tool calls, then a submit) with
the same tool. Bare LangGraph is the textbook loop: a model node, ``ToolNode`` and
``tools_condition``. The difference per step is what casework's middleware, usage callback,
event stream and result building cost.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from casework.config import Limits
from casework.llm.scripted import ScriptedChatModel, call
from casework.runtime.react import ReactAgent

__all__ = ["print_runtime_report", "run_runtime_bench"]


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


class BenchDecision(BaseModel):
    """Final decision."""

    verdict: str
    confidence: float = Field(ge=0, le=100)
    reasoning: str


def _script(steps: int) -> list[Any]:
    return [call("lookup", key=f"k{i}") for i in range(steps)] + [
        call("submit_decision", verdict="VALID", confidence=90, reasoning="done")
    ]


def _casework_once(steps: int) -> float:
    model = ScriptedChatModel(steps=_script(steps))
    big = 10**6
    agent = ReactAgent(
        model=model,
        tools=[lookup],
        decision_model=BenchDecision,
        system_prompt="bench",
        limits=Limits(max_model_calls=big, max_tool_calls=big, recursion_limit=big),
    )
    t0 = time.perf_counter()
    result = agent.run("go", trace=False)
    elapsed = time.perf_counter() - t0
    assert result.ended_by == "submit", result.ended_by
    return elapsed


def _bare_once(steps: int) -> float:
    model = ScriptedChatModel(steps=_script(steps))

    @tool("submit_decision", args_schema=BenchDecision)
    def submit(**kwargs: Any) -> str:
        """Submit."""
        return "ok"

    bound = model.bind_tools([lookup, submit])

    def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        if any(c["name"] == "submit_decision" for c in last.tool_calls):
            return END
        return tools_condition(state)

    graph = StateGraph(MessagesState)
    graph.add_node("model", agent_node)
    graph.add_node("tools", ToolNode([lookup, submit]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, {"tools": "tools", END: END})
    graph.add_edge("tools", "model")
    app = graph.compile()
    t0 = time.perf_counter()
    app.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": 10**6})
    return time.perf_counter() - t0


def run_runtime_bench(*, steps: int = 200, repeats: int = 5) -> dict[str, Any]:
    """Median of ``repeats`` runs per variant, interleaved so machine noise hits both alike."""
    _casework_once(5), _bare_once(5)  # warm imports and caches
    cw, bare = [], []
    for _ in range(repeats):
        cw.append(_casework_once(steps))
        bare.append(_bare_once(steps))
    cw_med, bare_med = statistics.median(cw), statistics.median(bare)
    model_calls = steps + 1
    per_step_cw = cw_med / model_calls * 1000
    per_step_bare = bare_med / model_calls * 1000
    return {
        "steps": steps,
        "repeats": repeats,
        "casework_ms_per_step": round(per_step_cw, 3),
        "bare_langgraph_ms_per_step": round(per_step_bare, 3),
        "overhead_ms_per_step": round(per_step_cw - per_step_bare, 3),
        "ratio_vs_bare": round(cw_med / bare_med, 3),
        "target_overhead_ms_per_step": 5.0,
        "meets_target": (per_step_cw - per_step_bare) < 5.0,
        "casework_seconds": [round(x, 4) for x in cw],
        "bare_seconds": [round(x, 4) for x in bare],
    }


def print_runtime_report(result: dict[str, Any], console: Console) -> None:
    table = Table(
        "metric",
        "value",
        title=f"ReAct runtime, {result['steps']} steps, median of {result['repeats']}",
    )
    table.add_row("casework ms / step", f"{result['casework_ms_per_step']:.3f}")
    table.add_row("bare LangGraph ms / step", f"{result['bare_langgraph_ms_per_step']:.3f}")
    ok = "[green]" if result["meets_target"] else "[red]"
    table.add_row("overhead ms / step (target < 5)", f"{ok}{result['overhead_ms_per_step']:.3f}[/]")
    table.add_row("ratio vs bare", f"{result['ratio_vs_bare']:.2f}x")
    console.print(table)
