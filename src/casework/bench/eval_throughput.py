"""Evaluation throughput: N cases at concurrency C with a scripted model that sleeps per call.

Every case runs a real ``ReactAgent`` (a lookup, then the submit) with traces on, through
the harness's one path (``run_suite``): deps built once, a worker thread per slot, the case's
model from ``config.models``. The ideal wall time is ``cases x calls x latency / concurrency``;
the report gives the measured wall time over it (1.0 is perfect overlap).
"""

from __future__ import annotations

import json
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool
from rich.console import Console

from casework.config import Limits, Settings, get_settings
from casework.evals import EvalCase, EvalConfig, EvalSuite, run_suite
from casework.llm.scripted import ScriptedChatModel, call
from casework.runtime.decision import Decision
from casework.runtime.harness import run_info
from casework.runtime.react import ReactAgent
from casework.runtime.runconfig import RunConfig

__all__ = ["print_eval_throughput_report", "run_eval_throughput_bench"]

CALLS = 2
"""Model calls per case: the lookup, then the submit."""


@tool
def lookup_word(word: str) -> str:
    """Look up the category of a word."""
    return f"{word}: FRUIT"


class BenchDecision(Decision):
    """Whether the label fits the word."""

    verdict: Literal["VALID", "INVALID", "NEEDS_REVIEW"]


def _responder(messages: list[BaseMessage], tools: list[str]) -> Any:
    if not any(isinstance(m, ToolMessage) for m in messages):
        return call("lookup_word", word="apple")
    return call("submit_decision", verdict="VALID", confidence=90, reasoning="apple is FRUIT")


@dataclass(frozen=True)
class _Deps:
    settings: Settings
    agents: dict[int, tuple[object, ReactAgent[BenchDecision]]] = field(default_factory=dict)
    in_flight: list[int] = field(default_factory=lambda: [0, 0])
    """[cases running now, most at once]."""
    lock: threading.Lock = field(default_factory=threading.Lock)


def _agent(deps: _Deps, config: RunConfig) -> ReactAgent[BenchDecision]:
    """One agent per model object: building one costs ~10 ms of CPU, a run a few."""
    model = config.models("default")
    found = deps.agents.get(id(model))
    if found is None or found[0] is not model:
        agent = ReactAgent(
            config=replace(config, limits=Limits(max_model_calls=4)),
            role="default",
            tools=[lookup_word],
            decision_model=BenchDecision,
            system_prompt="Look the word up, then submit.",
        )
        found = deps.agents[id(model)] = (model, agent)
    return found[1]


def _strategy(input: dict[str, Any], deps: _Deps, config: RunConfig) -> BenchDecision:
    with deps.lock:
        deps.in_flight[0] += 1
        deps.in_flight[1] = max(deps.in_flight)
        agent = _agent(deps, config)
    try:
        result = agent.run(json.dumps(input))
    finally:
        with deps.lock:
            deps.in_flight[0] -= 1
    assert result.decision is not None, result.ended_by
    result.decision.run = run_info(result, strategy="agent", model="scripted")
    return result.decision


def run_eval_throughput_bench(
    *,
    cases: int = 100,
    concurrency: int = 10,
    latency: float = 0.2,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """Runs the scripted evaluation once; wall time, ideal time and their ratio."""
    model = ScriptedChatModel(responder=_responder, latency=latency)
    deps: list[_Deps] = []

    def make_deps(s: Settings) -> _Deps:
        deps.append(_Deps(settings=s))
        return deps[-1]

    with tempfile.TemporaryDirectory(prefix="casework-bench-") as tmp:
        settings = (settings or get_settings()).model_copy(update={"home": Path(tmp)})
        suite = EvalSuite(
            app="bench",
            dataset=Path(tmp) / "unused.jsonl",
            strategies={"agent": _strategy},
            default_strategy="agent",
            labels=["VALID", "INVALID", "NEEDS_REVIEW"],
            deps=make_deps,
        )
        run = run_suite(
            suite,
            EvalConfig(
                cases=[
                    EvalCase(f"t{i:03d}", {"word": "apple", "label": "FRUIT"}, {"verdict": "VALID"})
                    for i in range(cases)
                ],
                concurrency=concurrency,
                base_model=lambda case_id, role: model,
                settings=settings,
                progress=False,
                store=False,
                report=False,
            ),
        )
    ideal = cases * CALLS * latency / concurrency
    return {
        "cases": cases,
        "concurrency": concurrency,
        "latency_seconds": latency,
        "wall_seconds": round(run.wall_seconds, 3),
        "ideal_seconds": round(ideal, 3),
        "ratio": round(run.wall_seconds / ideal, 3),
        "accuracy": run.metrics["verdict_accuracy"],
        "model_calls_mean": run.metrics["model_calls_mean"],
        "errors": run.metrics["errors"],
        "max_concurrent_cases": deps[0].in_flight[1],
    }


def print_eval_throughput_report(result: dict[str, Any], console: Console) -> None:
    console.print(
        f"{result['cases']} cases at concurrency {result['concurrency']}, "
        f"{result['latency_seconds'] * 1000:.0f} ms per model call: "
        f"{result['wall_seconds']:.2f} s against an ideal {result['ideal_seconds']:.2f} s "
        f"(ratio [bold]{result['ratio']:.3f}[/]; accuracy {result['accuracy']:.0%}, "
        f"{result['errors']} errors)"
    )
