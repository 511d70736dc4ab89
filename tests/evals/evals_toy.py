"""A toy app for the harness's own tests: a word-label checker with two tools, a scripted model
whose behaviour each case chooses (normal, typo, circular, extra, wrong, stuck), an agent
strategy, a non-LLM baseline and a scripted judge. Nothing here needs the receipts
app, a network or the bundled model."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from casework.config import Limits, Settings
from casework.errors import InputError
from casework.evals.cassettes import JUDGE_ROLE
from casework.evals.suite import CaseOutput, EvalCase, EvalSuite
from casework.llm.scripted import ScriptedChatModel, call
from casework.runtime.decision import Decision, EndReason, RunInfo
from casework.runtime.harness import run_info
from casework.runtime.react import ReactAgent
from casework.runtime.runconfig import RunConfig
from casework.runtime.usage import Usage

KB = {
    "apple": "FRUIT",
    "banana": "FRUIT",
    "cherry": "FRUIT",
    "carrot": "VEGETABLE",
    "lettuce": "VEGETABLE",
    "onion": "VEGETABLE",
    "salmon": "FISH",
    "trout": "FISH",
}
SIMILAR = {"FRUIT": "pear, plum", "VEGETABLE": "leek, kale", "FISH": "cod, tuna"}

# (word, label, behaviour, expected verdict)
BASE_CASES = [
    ("apple", "FRUIT", "normal", "VALID"),
    ("carrot", "FRUIT", "normal", "INVALID"),
    ("salmon", "FISH", "typo", "VALID"),
    ("banana", "FRUIT", "circular", "VALID"),
    ("lettuce", "VEGETABLE", "extra", "VALID"),
    ("trout", "FRUIT", "wrong", "INVALID"),
    ("cherry", "FRUIT", "stuck", "VALID"),
    ("onion", "VEGETABLE", "normal", "VALID"),
]
SCENARIOS = {
    "normal": "standard",
    "typo": "recovery",
    "circular": "loop",
    "extra": "exploration",
    "wrong": "trap",
    "stuck": "trap",
}


class ToyDecision(Decision):
    """Whether the label fits the word."""

    verdict: Literal["VALID", "INVALID", "NEEDS_REVIEW"]
    reasoning: str = ""


@tool
def lookup_word(word: str) -> str:
    """Look up the category of a word."""
    if word not in KB:
        raise ValueError(f"unknown word {word!r}")
    return f"{word}: {KB[word]}"


@tool
def search_similar(word: str) -> str:
    """Words similar to a word."""
    return f"similar to {word}: {SIMILAR[KB.get(word, 'FRUIT')]}"


def toy_inputs(messages: list[BaseMessage]) -> dict[str, Any]:
    human = next(m for m in messages if isinstance(m, HumanMessage))
    return json.loads(str(human.content))


def toy_responder(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    """The scripted agent: what it does depends only on the messages (so it replays)."""
    inputs = toy_inputs(messages)
    word, label, behaviour = inputs["word"], inputs["label"], inputs.get("behaviour", "normal")
    results = [m for m in messages if isinstance(m, ToolMessage) and m.name != "submit_decision"]
    ok = [m for m in results if m.status != "error"]

    def submit(flip: bool = False, confidence: float = 90) -> AIMessage:
        found = str(ok[0].content).split(": ")[-1] if ok else "?"
        verdict = "VALID" if found == label else "INVALID"
        if flip:
            verdict = "INVALID" if verdict == "VALID" else "VALID"
        return call(
            "submit_decision",
            verdict=verdict,
            confidence=confidence,
            reasoning=f"{word} is {found}; the label is {label}.",
        )

    if behaviour == "typo":
        if not results:
            return call("lookup_word", word=word + "x")
        if not ok:
            return call("lookup_word", word=word)
        return submit()
    if behaviour == "circular":
        if len(results) < 2:
            return call("lookup_word", word=word)
        return submit(confidence=70)
    if behaviour == "extra":
        if not results:
            return call("lookup_word", word=word)
        if len(results) == 1:
            return call("search_similar", word=word)
        return submit()
    if behaviour == "stuck":
        return call("lookup_word", word=word)
    if not results:
        return call("lookup_word", word=word)
    return submit(flip=behaviour == "wrong", confidence=95 if behaviour == "wrong" else 90)


_EXPECTED = re.compile(r"## Reference \(expected output\)\s*```json\s*(\{.*?\})\s*```", re.DOTALL)
_OUTPUT = re.compile(r"## Agent output\s*```json\s*(\{.*?\})\s*```", re.DOTALL)


def judge_responder(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    """A scripted judge: agrees with the reference verdict, except on 70%-confident outputs."""
    body = str(messages[-1].content)
    expected = json.loads(_EXPECTED.search(body).group(1))  # type: ignore[union-attr]
    output = json.loads(_OUTPUT.search(body).group(1))  # type: ignore[union-attr]
    good = expected.get("verdict") == output.get("verdict")
    if output.get("confidence") == 70:
        good = not good
    return call(
        "record_judgement",
        score=0.9 if good else 0.2,
        rationale="Matches the reference." if good else "Does not.",
    )


def toy_models(case_id: str, role: str) -> ScriptedChatModel:
    """``base_model`` for the runner: the scripted agent, or the scripted judge."""
    return ScriptedChatModel(responder=judge_responder if role == JUDGE_ROLE else toy_responder)


@dataclass(frozen=True)
class ToyDeps:
    """The toy app's deps: its settings and a per-run counter."""

    settings: Settings
    attempts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ToyInput:
    case_id: str
    inputs: dict[str, Any]


def toy_input(case: EvalCase) -> ToyInput:
    return ToyInput(case.id, dict(case.inputs))


def toy_deps(settings: Settings) -> ToyDeps:
    return ToyDeps(settings=settings)


def _agent(config: RunConfig) -> ReactAgent[ToyDecision]:
    return ReactAgent(
        config=replace(config, limits=Limits(max_model_calls=4)),
        role="default",
        tools=[lookup_word, search_similar],
        decision_model=ToyDecision,
        system_prompt="Check whether the label fits the word. Look the word up, then submit.",
        name="toy",
    )


def agent_strategy(input: ToyInput, deps: ToyDeps, config: RunConfig) -> ToyDecision:
    result = _agent(config).run(json.dumps(input.inputs, sort_keys=True))
    decision = result.decision or ToyDecision(
        verdict="NEEDS_REVIEW", confidence=0, reasoning="No decision."
    )
    decision.run = run_info(result, strategy="agent", model=None)
    return decision


def baseline_strategy(input: ToyInput, deps: ToyDeps, config: RunConfig) -> ToyDecision:
    found = KB.get(input.inputs["word"])
    verdict = "VALID" if found == input.inputs["label"] else "INVALID"
    return ToyDecision(
        verdict=verdict,
        confidence=100,
        reasoning="dictionary",
        run=RunInfo(ended_by=EndReason.RULES, strategy="baseline", usage=Usage(tool_calls=1)),
    )


def flaky_strategy(input: ToyInput, deps: ToyDeps, config: RunConfig) -> ToyDecision:
    """Times out on a case's first attempt (transient), and refuses case ids with 'bad'."""
    deps.attempts[input.case_id] = deps.attempts.get(input.case_id, 0) + 1
    if "bad" in input.case_id:
        raise InputError(f"Case {input.case_id} is malformed.")
    if deps.attempts[input.case_id] == 1:
        raise TimeoutError("the model did not answer in time")
    return agent_strategy(input, deps, config)


def reasoning_names_word(case: EvalCase, out: CaseOutput) -> dict[str, Any]:
    """A domain evaluator: does the reasoning name the word?"""
    return {"reasoning_names_word": case.inputs["word"] in out.output.get("reasoning", "")}


def make_cases(copies: int = 1) -> list[EvalCase]:
    cases = []
    for k in range(copies):
        for i, (word, label, behaviour, verdict) in enumerate(BASE_CASES):
            suffix = f"-{k}" if copies > 1 else ""
            cases.append(
                EvalCase(
                    id=f"c{i + 1:02d}{suffix}",
                    inputs={"word": word, "label": label, "behaviour": behaviour},
                    expected={
                        "verdict": verdict,
                        "tools": ["lookup_word"],
                        "tool_args": {"lookup_word": {"word": word}},
                    },
                    metadata={
                        "scenario_type": SCENARIOS[behaviour],
                        "complexity": "simple" if behaviour == "normal" else "edge",
                        "tags": [behaviour],
                    },
                )
            )
    return cases


def write_dataset(path: Path, cases: list[EvalCase]) -> Path:
    from casework.evals.datasets import dump_dataset

    return dump_dataset(cases, path)


def make_suite(dataset: Path, **overrides: Any) -> EvalSuite:
    values: dict[str, Any] = {
        "app": "toy",
        "dataset": dataset,
        "strategies": {
            "agent": agent_strategy,
            "baseline": baseline_strategy,
            "flaky": flaky_strategy,
        },
        "input_model": toy_input,
        "deps": toy_deps,
        "default_strategy": "agent",
        "labels": ["VALID", "INVALID", "NEEDS_REVIEW"],
        "evaluators": [reasoning_names_word],
        "targets": {
            "verdict_accuracy": 0.95,
            "redundant_call_rate_max": 0.05,
            "reasoning_names_word": 0.5,
        },
        "judge_rubric": "The verdict matches the reference and the reasoning names the word's category.",
    }
    values.update(overrides)
    return EvalSuite(**values)
