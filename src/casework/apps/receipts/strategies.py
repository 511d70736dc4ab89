"""The receipts strategies: plain functions ``run(input, deps, config) -> LabelDecision``.

The CLI (``receipts validate``, ``harmonize``), the API (``POST /receipts/validate``) and the
evaluation (``casework eval receipts --strategy S``) all call these, by name, with the same
kind of deps and a run config (``RunConfig``: the models, the trace folder); what is
measured is what users run. Each resolves the input to the stored word,
decides, applies the policy (on the stored calibration of (strategy, model), if any) and fills
``decision.run``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from casework.apps.receipts.agent import agent_for, run_agent
from casework.apps.receipts.baseline import baseline_decide
from casework.apps.receipts.classify import run_choice
from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.evidence import word_facts
from casework.apps.receipts.labels import resolve_input
from casework.apps.receipts.memory import MEMORY_THRESHOLD, memory
from casework.apps.receipts.models import DECISION_THRESHOLD, ROLES, LabelDecision, LabelInput
from casework.apps.receipts.policy import apply_policy
from casework.apps.receipts.rules import decide_by_rules
from casework.llm.roles import LOCAL_ROLE
from casework.runtime.cascade import Cascade, Layer, LayerOutcome
from casework.runtime.decision import EndReason, RunInfo
from casework.runtime.runconfig import RunConfig
from casework.runtime.usage import Usage

__all__ = [
    "SHIPPED_POLICY",
    "STRATEGIES",
    "LabelStrategy",
    "agent",
    "baseline",
    "cascade",
    "choice",
    "memory",
    "offline",
    "rules",
]

LabelStrategy = Callable[[LabelInput, ReceiptsDeps, RunConfig], LabelDecision]
"""A receipts strategy: a ``casework.runtime.strategy.Strategy`` that returns a LabelDecision."""


def baseline(input: LabelInput, deps: ReceiptsDeps, config: RunConfig) -> LabelDecision:
    """The similarity baseline: edge cases, then a vote of similar words (no model)."""
    calibration = deps.calibration("baseline", None) if deps.calibration else None
    return baseline_decide(deps, resolve_input(deps, input), calibration=calibration)


def rules(input: LabelInput, deps: ReceiptsDeps, config: RunConfig) -> LabelDecision:
    """The rule layer alone (receipts/rules.py): no model, no vector search. It shows what the
    model adds over the rules in the evaluation."""
    started = time.perf_counter()
    ref = resolve_input(deps, input)
    decided = decide_by_rules(word_facts(deps, ref))
    calibration = deps.calibration("rules", None) if deps.calibration else None
    final, confidence, downgraded = apply_policy(decided.verdict, decided.confidence, calibration)
    return LabelDecision(
        verdict=final,
        confidence=confidence,
        reasoning=decided.reasoning,
        evidence=decided.evidence,
        raw_verdict=decided.verdict,
        policy_applied=downgraded,
        calibrated_confidence=round(calibration.apply(confidence), 2)
        if calibration is not None
        else None,
        run=RunInfo(
            ended_by=EndReason.RULES,
            strategy="rules",
            usage=Usage(wall_seconds=time.perf_counter() - started),
        ),
    )


def agent(input: LabelInput, deps: ReceiptsDeps, config: RunConfig) -> LabelDecision:
    """The ReAct agent on ``config.models("specialist")`` with the six evidence tools."""
    ref = resolve_input(deps, input)
    name = config.models.name(ROLES["agent"])
    calibration = deps.calibration("agent", name) if deps.calibration else None
    return run_agent(agent_for(deps, config), ref, model=name, calibration=calibration)


def choice(input: LabelInput, deps: ReceiptsDeps, config: RunConfig) -> LabelDecision:
    """The bundled model asked which label fits the word (``classify.py``): one scored choice
    among the labels the word's shape allows, no ReAct run; the policy applied."""
    ref = resolve_input(deps, input)
    name = config.models.name(LOCAL_ROLE)
    decided = run_choice(deps, config, ref)
    calibration = deps.calibration("choice", name) if deps.calibration else None
    final, confidence, downgraded = apply_policy(decided.verdict, decided.confidence, calibration)
    return decided.model_copy(
        update={
            "verdict": final,
            "confidence": confidence,
            "policy_applied": downgraded,
            "calibrated_confidence": round(calibration.apply(confidence), 2)
            if calibration is not None
            else None,
        }
    )


def _raw(strategy: LabelStrategy) -> LabelStrategy:
    """A strategy's verdict before its own policy: in a cascade, the cascade's thresholds
    (on each layer's calibrated confidence) decide instead."""

    def run(input: LabelInput, deps: ReceiptsDeps, config: RunConfig) -> LabelDecision:
        decided = strategy(input, deps, config)
        raw = decided.raw_verdict or decided.verdict
        return decided.model_copy(update={"verdict": raw, "policy_applied": False})

    return run


SHIPPED_POLICY = Path(__file__).parent / "data" / "cascade-offline.json"
"""The offline cascade's thresholds as fitted on the development receipts (the six written
for the project: ``casework eval calibrate RUN --target 0.9`` on an ``--all-layers`` run of
160 of their cases), used until a user fits their own."""


def _review(last: LabelDecision | None, said: str, outcomes: list[LayerOutcome]) -> LabelDecision:
    """No layer was sure: the word goes to a person with the last layer's evidence."""
    return LabelDecision(
        verdict="NEEDS_REVIEW",
        confidence=last.confidence if last else 0.0,
        reasoning=f"No layer was sure enough: {said}."[:500],
        evidence=list(last.evidence) if last else [],
        raw_verdict=last.raw_verdict if last else None,
        policy_applied=True,
    )


cascade = Cascade(
    "receipts",
    [
        Layer("memory", memory, default_threshold=MEMORY_THRESHOLD),
        Layer("rules", _raw(rules), default_threshold=DECISION_THRESHOLD),
        Layer("baseline", _raw(baseline), default_threshold=DECISION_THRESHOLD),
        Layer("choice", _raw(choice), default_threshold=DECISION_THRESHOLD),
        Layer("agent", _raw(agent), default_threshold=DECISION_THRESHOLD, remote=True),
    ],
    decision=LabelDecision,
    role=ROLES["agent"],
    review=_review,
    no_answer=lambda said, outcomes: _review(None, said, outcomes),
    shipped_policy=SHIPPED_POLICY,
)
"""The memory of verified labels (``memory.py``), then the rules, then the neighbour vote, then the bundled model's label choice, then (when one is
configured) the remote model's agent: the first layer sure of the word decides."""


offline = Cascade(
    "receipts",
    [
        Layer("memory", memory, default_threshold=MEMORY_THRESHOLD),
        Layer("rules", _raw(rules), default_threshold=DECISION_THRESHOLD),
        Layer("baseline", _raw(baseline), default_threshold=DECISION_THRESHOLD),
    ],
    decision=LabelDecision,
    role=ROLES["agent"],
    review=_review,
    no_answer=lambda said, outcomes: _review(None, said, outcomes),
    shipped_policy=SHIPPED_POLICY,
    name="memory-offline",
)
"""The cascade without a model (the memory, the rules, the neighbour vote; nobody sure: a
person): what learning from review does when no model is at hand."""


STRATEGIES: dict[str, LabelStrategy] = {
    "memory": memory,
    "rules": rules,
    "baseline": baseline,
    "choice": choice,
    "agent": agent,
    "cascade": cascade,
    "memory-offline": offline,
}
