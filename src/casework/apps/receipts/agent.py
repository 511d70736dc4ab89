"""The label validation agent: ``build_agent`` wires it, ``run_agent`` runs it on one word.

A ReAct agent (``casework.runtime.ReactAgent``) with the six evidence tools and the
``submit_decision`` terminal tool whose schema is ``LabelDecision`` (without the fields the
policy and the runtime fill). The word under
validation travels in the run context (``WordRef``). After the run the decision policy is
applied deterministically (``policy.apply_policy``).
"""

from __future__ import annotations

import json
from dataclasses import replace

from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.models import LABEL_DEFINITIONS, ROLES, LabelDecision, WordRef
from casework.apps.receipts.policy import apply_policy
from casework.apps.receipts.tools import build_tools
from casework.config import Limits
from casework.runtime import ReactAgent, RunResult
from casework.runtime.calibration import Calibration
from casework.runtime.harness import run_info
from casework.runtime.middleware import EvidenceBudget
from casework.runtime.prompts import load_prompt
from casework.runtime.runconfig import RunConfig

__all__ = [
    "EVIDENCE_BUDGET",
    "agent_for",
    "build_agent",
    "decision_from_run",
    "render_system_prompt",
    "render_task",
    "run_agent",
]

EVIDENCE_BUDGET = 4
"""Evidence tool calls after which the agent is asked for its decision."""
SUBMIT = "submit_decision"
PRIMARY = "get_word_context"


def render_system_prompt() -> str:
    definitions = "\n".join(f"- {name}: {text}" for name, text in LABEL_DEFINITIONS.items())
    return load_prompt(__package__, "system", label_definitions=definitions)


def render_task(ref: WordRef) -> str:
    return load_prompt(
        __package__,
        "task",
        word=ref.word_text,
        line_id=ref.line_id,
        word_id=ref.word_id,
        label=ref.suggested_label,
        definition=LABEL_DEFINITIONS.get(ref.suggested_label, "a label of this dataset"),
        merchant=ref.merchant_name or "unknown",
        reason=(ref.original_reasoning or "proposed for validation")[:300],
    )


def _limits(base: Limits) -> Limits:
    """``base`` within the evidence budget."""
    return base.model_copy(
        update={
            "max_model_calls": min(base.max_model_calls, EVIDENCE_BUDGET + 4),
            "max_tool_calls": min(base.max_tool_calls, EVIDENCE_BUDGET + 6),
        }
    )


def build_agent(
    deps: ReceiptsDeps, config: RunConfig, *, evidence_budget: int = EVIDENCE_BUDGET
) -> ReactAgent[LabelDecision]:
    """The validation agent over ``deps`` on ``config``'s agent model and trace folder;
    reusable across words. Its budgets: the run's (else the settings') within the caps."""
    return ReactAgent(
        config=replace(config, limits=_limits(config.limits or deps.settings.limits)),
        role=ROLES["agent"],
        tools=build_tools(deps),
        decision_model=LabelDecision,
        system_prompt=render_system_prompt(),
        name="receipts-validator",
        context_schema=WordRef,
        middleware=[
            EvidenceBudget(
                budget=evidence_budget,
                submit_name=SUBMIT,
                primary=PRIMARY,
                name="receipts_evidence_budget",
            )
        ],
    )


def agent_for(deps: ReceiptsDeps, config: RunConfig) -> ReactAgent[LabelDecision]:
    """The agent on the run's agent model, trace folder and budgets, built once per model
    object and deps cache (building one costs ~10 ms of CPU; the harness and the harmoniser
    decide many words on one model)."""
    model = config.models(ROLES["agent"])

    def build() -> ReactAgent[LabelDecision]:
        return build_agent(deps, config)

    if deps.cache is None:
        return build()
    budget = config.limits.model_dump_json() if config.limits is not None else None
    found = deps.cached(("agent", id(model), config.traces, budget), lambda: (model, build()))
    if found[0] is not model:  # a recycled id: another model lived here before
        return build()
    return found[1]


def _unavailable(run: RunResult[LabelDecision]) -> list[str]:
    names = []
    for call in run.tool_calls:
        try:
            data = json.loads(call.output) if call.output.startswith("{") else {}
        except json.JSONDecodeError:
            data = {}
        if call.name != SUBMIT and (data.get("status") == "unavailable" or not call.ok):
            names.append(call.name)
    return sorted(set(names))


def decision_from_run(
    run: RunResult[LabelDecision], *, model: str, calibration: Calibration | None = None
) -> LabelDecision:
    """The run's decision with the policy applied and ``decision.run`` filled."""
    stated = run.decision or LabelDecision(
        verdict="NEEDS_REVIEW", confidence=0, reasoning="No decision."
    )
    final, confidence, downgraded = apply_policy(stated.verdict, stated.confidence, calibration)
    reasoning = stated.reasoning
    if downgraded:
        reasoning = f"{reasoning} [policy: {stated.verdict} at {confidence:.0f}% is not above 80%, so NEEDS_REVIEW]"
    return stated.model_copy(
        update={
            "verdict": final,
            "confidence": confidence,
            "reasoning": reasoning,
            "raw_verdict": stated.verdict,
            "policy_applied": downgraded,
            "calibrated_confidence": round(calibration.apply(confidence), 2)
            if calibration is not None
            else None,
            "unavailable": _unavailable(run),
            "run": run_info(run, strategy="agent", model=model),
        }
    )


def run_agent(
    agent: ReactAgent[LabelDecision],
    ref: WordRef,
    *,
    model: str,
    trace: bool = True,
    calibration: Calibration | None = None,
) -> LabelDecision:
    """Decide one word with ``agent`` (on the model named ``model``); the policy applied,
    ``decision.run`` filled."""
    run = agent.run(render_task(ref), context=ref, trace=trace)
    return decision_from_run(run, model=model, calibration=calibration)
