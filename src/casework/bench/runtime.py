"""Runtime overhead: the ReAct loop with a zero-latency scripted model vs bare LangGraph.

Both variants run the same scripted conversation (``steps`` tool calls, then a submit) with
the same tool, the same system prompt, and both execute the submit tool before they stop.
Bare LangGraph is the textbook loop: a model node, ``ToolNode`` and ``tools_condition``,
with the tool pool's size given as casework gives it.
casework runs with every feature on: limits, the nudge, usage accounting, the event stream,
a JSONL trace and the result with grounded evidence. The difference per step is what those
cost.

The checked figure is the ratio of CPU time per step (casework / bare <= ``TARGET_RATIO``):
the median over ``repeats`` back-to-back pairs (the order alternating) of each pair's ratio.
CPU time (``process_time``: every thread of this process, the tool node's worker threads
included) counts the work each loop does and not the time other processes hold the shared
cores, so it is the less noisy of the two; pairing keeps a burst of load from landing on one
variant only. Wall time is reported next to it, and so is the range of the pairs' ratios. ``check_runtime_bench`` turns a
missed target into an error message for ``make bench`` (timing limits live there, not in
tests).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from casework.config import Limits
from casework.llm.roles import RoleModels
from casework.llm.scripted import ScriptedChatModel, call
from casework.runtime.react import TOOL_THREADS, ReactAgent
from casework.runtime.runconfig import RunConfig

__all__ = [
    "TARGET_RATIO",
    "bare_graph",
    "casework_agent",
    "check_runtime_bench",
    "print_runtime_report",
    "run_runtime_bench",
]

TARGET_RATIO = 1.2
SYSTEM_PROMPT = "bench"


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


def casework_agent(steps: int, trace_dir: Path) -> ReactAgent[BenchDecision]:
    """casework's agent on the benchmark's script, every feature on (a trace in ``trace_dir``)."""
    big = 10**6
    return ReactAgent(
        config=RunConfig(
            models=RoleModels.given(ScriptedChatModel(steps=_script(steps))),
            limits=Limits(max_model_calls=big, max_tool_calls=big, recursion_limit=big),
            traces=trace_dir,
        ),
        role="default",
        tools=[lookup],
        decision_model=BenchDecision,
        system_prompt=SYSTEM_PROMPT,
    )


def _casework_once(steps: int, trace_dir: Path) -> tuple[float, float]:
    agent = casework_agent(steps, trace_dir)
    t0, c0 = time.perf_counter(), time.process_time()
    result = agent.run("go")
    elapsed = time.perf_counter() - t0, time.process_time() - c0
    if result.ended_by != "submit" or result.usage.model_calls != steps + 1:
        raise RuntimeError(f"The benchmark run ended by {result.ended_by}, not by its submit.")
    return elapsed


def bare_graph(steps: int) -> Any:
    """The textbook LangGraph loop on the benchmark's script, compiled: a model node (the
    system prompt in front, as ``create_agent`` does), ``ToolNode`` and ``tools_condition``,
    ending once the submit tool has run."""
    model = ScriptedChatModel(steps=_script(steps))

    @tool("submit_decision", args_schema=BenchDecision)
    def submit(**kwargs: Any) -> str:
        """Submit."""
        return "ok"

    bound = model.bind_tools([lookup, submit])
    system = SystemMessage(SYSTEM_PROMPT)

    def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke([system, *state["messages"]])]}

    def after_tools(state: MessagesState) -> str:
        last = state["messages"][-1]
        submitted = isinstance(last, ToolMessage) and last.name == "submit_decision"
        return END if submitted else "model"

    graph = StateGraph(MessagesState)
    graph.add_node("model", agent_node)
    graph.add_node("tools", ToolNode([lookup, submit]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    graph.add_conditional_edges("tools", after_tools, {"model": "model", END: END})
    return graph.compile()


def _bare_once(steps: int) -> tuple[float, float]:
    app = bare_graph(steps)
    t0, c0 = time.perf_counter(), time.process_time()
    # The tool pool's size as casework gives it, so neither loop pays a cpu_count() per step.
    config: Any = {"recursion_limit": 10**6, "max_concurrency": TOOL_THREADS}
    app.invoke({"messages": [HumanMessage("go")]}, config)
    return time.perf_counter() - t0, time.process_time() - c0


def run_runtime_bench(*, steps: int = 200, repeats: int = 5) -> dict[str, Any]:
    """``repeats`` back-to-back pairs of runs, the order alternating, so a burst of load from
    other processes hits one pair rather than one variant; the checked ratio is the median of
    the pairs' CPU ratios."""
    cw: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="casework-bench-runtime-") as traces:
        _casework_once(5, Path(traces)), _bare_once(5)  # warm imports and caches
        for i in range(repeats):
            if i % 2:
                bare.append(_bare_once(steps))
                cw.append(_casework_once(steps, Path(traces)))
            else:
                cw.append(_casework_once(steps, Path(traces)))
                bare.append(_bare_once(steps))
    wall_cw, wall_bare = (statistics.median(x[0] for x in runs) for runs in (cw, bare))
    cpu_cw, cpu_bare = (statistics.median(x[1] for x in runs) for runs in (cw, bare))
    pair_ratios = sorted(c[1] / b[1] for c, b in zip(cw, bare, strict=True))
    model_calls = steps + 1
    ratio = statistics.median(pair_ratios)
    return {
        "steps": steps,
        "repeats": repeats,
        "casework_ms_per_step": round(wall_cw / model_calls * 1000, 3),
        "bare_langgraph_ms_per_step": round(wall_bare / model_calls * 1000, 3),
        "casework_cpu_ms_per_step": round(cpu_cw / model_calls * 1000, 3),
        "bare_langgraph_cpu_ms_per_step": round(cpu_bare / model_calls * 1000, 3),
        "overhead_cpu_ms_per_step": round((cpu_cw - cpu_bare) / model_calls * 1000, 3),
        "ratio_vs_bare": round(ratio, 3),
        "cpu_ratio_range": [round(pair_ratios[0], 3), round(pair_ratios[-1], 3)],
        "wall_ratio_vs_bare": round(wall_cw / wall_bare, 3),
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio <= TARGET_RATIO,
        "casework_seconds": [round(x[0], 4) for x in cw],
        "bare_seconds": [round(x[0], 4) for x in bare],
    }


def check_runtime_bench(result: dict[str, Any]) -> str | None:
    """None when the ratio target is met, else one sentence saying what was missed."""
    if result["meets_target"]:
        return None
    return (
        f"casework's run loop costs {result['ratio_vs_bare']:.2f}x bare LangGraph's CPU time "
        f"per step (target <= {result['target_ratio']}x); profile it with cProfile on "
        "casework.bench.runtime."
    )


def print_runtime_report(result: dict[str, Any], console: Console) -> None:
    table = Table(
        "metric",
        "casework",
        "bare LangGraph",
        title=f"ReAct runtime, {result['steps']} steps, median of {result['repeats']} pairs",
    )
    table.add_row(
        "wall ms / step",
        f"{result['casework_ms_per_step']:.3f}",
        f"{result['bare_langgraph_ms_per_step']:.3f}",
    )
    table.add_row(
        "CPU ms / step",
        f"{result['casework_cpu_ms_per_step']:.3f}",
        f"{result['bare_langgraph_cpu_ms_per_step']:.3f}",
    )
    ok = "[green]" if result["meets_target"] else "[red]"
    table.add_row(
        f"CPU ratio (target <= {result['target_ratio']}x)",
        f"{ok}{result['ratio_vs_bare']:.2f}x[/]",
        "1.00x",
    )
    low, high = result["cpu_ratio_range"]
    table.add_row("CPU ratio, lowest-highest pair", f"{low:.2f}x-{high:.2f}x", "1.00x")
    table.add_row("wall ratio", f"{result['wall_ratio_vs_bare']:.2f}x", "1.00x")
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    """``python -m casework.bench.runtime [--check] [--steps N] [--repeats N]`` for make bench."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m casework.bench.runtime")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args(argv)
    result = run_runtime_bench(steps=args.steps, repeats=args.repeats)
    print_runtime_report(result, Console())
    problem = check_runtime_bench(result) if args.check else None
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
