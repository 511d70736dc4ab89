"""The label validation agent: ``build_agent`` wires it, ``run_agent`` / ``arun_agent`` run it.

A ReAct agent (``casework.runtime.ReactAgent``) with the six evidence tools and the
``submit_decision`` terminal tool whose schema is ``ValidationDecision``. The word under
validation travels in the run context (``WordRef``). After the run the decision policy is
applied deterministically (``policy.apply_policy``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.models import (
    LABEL_DEFINITIONS,
    ValidationDecision,
    ValidationResult,
    WordRef,
)
from casework.apps.receipts.policy import apply_policy
from casework.apps.receipts.tools import build_tools
from casework.config import Limits
from casework.runtime import ReactAgent, RunResult
from casework.runtime.middleware import EvidenceBudget
from casework.runtime.prompts import load_prompt

__all__ = [
    "EVIDENCE_BUDGET",
    "arun_agent",
    "build_agent",
    "render_system_prompt",
    "render_task",
    "result_from_run",
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


def _limits(deps: ReceiptsDeps) -> Limits:
    base = deps.settings.limits
    return base.model_copy(
        update={
            "max_model_calls": min(base.max_model_calls, EVIDENCE_BUDGET + 4),
            "max_tool_calls": min(base.max_tool_calls, EVIDENCE_BUDGET + 6),
        }
    )


def build_agent(
    deps: ReceiptsDeps,
    model: BaseChatModel,
    *,
    trace_dir: Path | None = None,
    limits: Limits | None = None,
    evidence_budget: int = EVIDENCE_BUDGET,
) -> ReactAgent[ValidationDecision]:
    """The validation agent over ``deps`` with ``model``; reusable across words."""
    return ReactAgent(
        model=model,
        tools=build_tools(deps),
        decision_model=ValidationDecision,
        system_prompt=render_system_prompt(),
        name="receipts-validator",
        context_schema=WordRef,
        limits=limits or _limits(deps),
        middleware=[
            EvidenceBudget(
                budget=evidence_budget,
                submit_name=SUBMIT,
                primary=PRIMARY,
                name="receipts_evidence_budget",
            )
        ],
        trace_dir=trace_dir,
    )


def _model_name(agent: ReactAgent) -> str:
    for attr in ("model_name", "model"):
        value = getattr(agent.model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(agent.model).__name__


def result_from_run(
    ref: WordRef, run: RunResult[ValidationDecision], *, model: str, seconds: float
) -> ValidationResult:
    """The run's decision with the policy applied, in the shared result type."""
    decision = run.decision or ValidationDecision(
        decision="NEEDS_REVIEW", confidence=0, reasoning="No decision."
    )
    final, confidence, downgraded = apply_policy(decision.decision, decision.confidence)
    reasoning = decision.reasoning
    if downgraded:
        reasoning = f"{reasoning} [policy: {decision.decision} at {confidence:.0f}% is not above 80%, so NEEDS_REVIEW]"
    unavailable = []
    for call in run.tool_calls:
        try:
            data = json.loads(call.output) if call.output.startswith("{") else {}
        except json.JSONDecodeError:
            data = {}
        if call.name != "submit_decision" and (data.get("status") == "unavailable" or not call.ok):
            unavailable.append(call.name)
    return ValidationResult(
        receipt=ref.receipt_key,
        line_id=ref.line_id,
        word_id=ref.word_id,
        word_text=ref.word_text,
        suggested_label=ref.suggested_label,
        decision=final,
        confidence=confidence,
        reasoning=reasoning,
        strategy="agent",
        model=model,
        raw_decision=decision.decision,
        policy_applied=downgraded,
        tool_calls=[c.name for c in run.tool_calls],
        unavailable=sorted(set(unavailable)),
        ended_by=run.ended_by,
        seconds=round(seconds, 3),
        input_tokens=run.usage.input_tokens,
        output_tokens=run.usage.output_tokens,
    )


def run_agent(
    agent: ReactAgent[ValidationDecision], ref: WordRef, *, trace: bool = True
) -> tuple[ValidationResult, RunResult]:
    started = time.perf_counter()
    run = agent.run(render_task(ref), context=ref, trace=trace)
    return result_from_run(
        ref, run, model=_model_name(agent), seconds=time.perf_counter() - started
    ), run


async def arun_agent(
    agent: ReactAgent[ValidationDecision], ref: WordRef, *, trace: bool = True
) -> tuple[ValidationResult, RunResult]:
    started = time.perf_counter()
    run = await agent.arun(render_task(ref), context=ref, trace=trace)
    return result_from_run(
        ref, run, model=_model_name(agent), seconds=time.perf_counter() - started
    ), run
