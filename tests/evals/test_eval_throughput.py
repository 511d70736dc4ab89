"""Throughput: 100 cases at concurrency 10 with a scripted model that sleeps 200 ms per call
finish within 15% of the ideal time (100 cases x 2 calls x 0.2 s / 10 = 4 s).

Every case runs a real ReactAgent on ``opts.model_for`` (a lookup, then the submit) with
traces on, like an app's strategy. The machine is shared with other work, so the best of three
attempts counts; the ratio is printed and recorded as a test property.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from evals_toy import ToyDecision, lookup_word, make_suite
from langchain_core.messages import BaseMessage, ToolMessage

from casework.config import Limits, Settings
from casework.evals import CaseOutput, EvalCase, run_suite
from casework.evals.suite import StrategyOptions
from casework.llm.scripted import ScriptedChatModel, call
from casework.runtime.react import ReactAgent

CASES, CONCURRENCY, LATENCY, CALLS = 100, 10, 0.2, 2
IDEAL = CASES * CALLS * LATENCY / CONCURRENCY


def responder(messages: list[BaseMessage], tools: list[str]):
    if not any(isinstance(m, ToolMessage) for m in messages):
        return call("lookup_word", word="apple")
    return call("submit_decision", verdict="VALID", confidence=90, reasoning="apple is FRUIT")


def strategy(opts: StrategyOptions) -> Callable[[EvalCase], CaseOutput]:
    """Builds a ReactAgent on ``opts.model_for(case.id, ...)`` and caches it by model identity:
    ``model_for`` hands out one model per role for a plain run (a fresh, recording or
    replaying one per case otherwise), and building an agent costs ~10 ms of CPU per case."""
    agents: dict[int, tuple[object, ReactAgent]] = {}
    lock = threading.Lock()

    def agent_for(model: object) -> ReactAgent:
        with lock:
            found = agents.get(id(model))
            if found is None or found[0] is not model:
                found = agents[id(model)] = (model, ReactAgent(
                    model=model, tools=[lookup_word], decision_model=ToyDecision,
                    system_prompt="Look the word up, then submit.", limits=Limits(max_model_calls=4),
                    trace_dir=opts.trace_dir,
                ))  # fmt: skip
            return found[1]

    def run(case: EvalCase) -> CaseOutput:
        result = agent_for(opts.model_for(case.id, "default")).run(json.dumps(case.inputs))
        return CaseOutput(output=result.decision.model_dump(mode="json"), run=result)

    return run


def test_100_cases_at_concurrency_10_within_15_percent_of_ideal(
    settings: Settings, record_property
) -> None:
    model = ScriptedChatModel(responder=responder, latency=LATENCY)
    suite = make_suite(settings.home / "unused.jsonl", strategies={"agent": strategy})
    cases = [
        EvalCase(f"t{i:03d}", {"word": "apple", "label": "FRUIT"}, {"verdict": "VALID"})
        for i in range(CASES)
    ]
    ratios = []
    for _ in range(3):
        run = run_suite(
            suite,
            cases=cases,
            concurrency=CONCURRENCY,
            base_model=lambda case_id, role: model,
            progress=False,
            store=False,
            report=False,
        )
        assert run.metrics["verdict_accuracy"] == 1.0 and run.metrics["model_calls_mean"] == CALLS
        ratios.append(run.wall_seconds / IDEAL)
        if ratios[-1] <= 1.15:
            break
    best = min(ratios)
    record_property("throughput_ratio", round(best, 3))
    print(
        f"\nthroughput: best wall / ideal = {best:.3f} (attempts: {', '.join(f'{r:.3f}' for r in ratios)}; ideal {IDEAL:.1f} s)"
    )
    assert best <= 1.15
