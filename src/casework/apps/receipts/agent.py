"""The label validation agent: ``build_agent`` wires it, ``run_agent`` runs it on one word.

A ReAct agent (``casework.runtime.ReactAgent``) with the six evidence tools and the
``submit_decision`` terminal tool whose schema is ``LabelDecision`` (without the fields the
policy and the runtime fill). The word under
validation travels in the run context (``WordRef``). After the run the decision policy is
applied deterministically (``policy.apply_policy``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from casework.apps.receipts.deps import ReceiptsDeps
from casework.apps.receipts.models import LABEL_DEFINITIONS, LabelDecision, WordRef
from casework.apps.receipts.policy import apply_policy
from casework.apps.receipts.prompts import render
from casework.apps.receipts.tools import build_tools
from casework.config import Limits
from casework.runtime import ReactAgent, RunResult
from casework.runtime.calibration import Calibration
from casework.runtime.runinfo import run_info

__all__ = [
    "EVIDENCE_BUDGET",
    "EvidenceBudget",
    "agent_for",
    "build_agent",
    "decision_from_run",
    "model_name",
    "render_system_prompt",
    "render_task",
    "run_agent",
]

EVIDENCE_BUDGET = 4
"""Evidence tool calls after which the agent is asked for its decision."""
SUBMIT = "submit_decision"
DECIDE_NOW = (
    "You have gathered {n} pieces of evidence. Call submit_decision now with your decision, "
    "confidence and reasoning."
)
REPEATED = "You already called {tool}; its result is above. Use it, or call submit_decision."
PRIMARY = "get_word_context"
EVIDENCE_FIRST = "Look at the evidence first: call get_word_context, then decide."


def _run_messages(messages: list[BaseMessage]) -> list[BaseMessage]:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, HumanMessage) and not m.additional_kwargs.get("casework_nudge"):
            return list(messages[i + 1 :])
    return list(messages)


class EvidenceBudget(AgentMiddleware):
    """Keeps a small model on track: a decision is accepted only after ``get_word_context``,
    each tool answers once per run, and after ``budget`` evidence calls the next model call
    ends with a request to decide (appended at the end, so a local model's prompt cache stays
    warm). Past ``budget + 2`` the submit tool is forced."""

    def __init__(self, *, budget: int = EVIDENCE_BUDGET, submit_name: str = SUBMIT) -> None:
        super().__init__()
        self.budget = budget
        self.submit_name = submit_name

    @property
    def name(self) -> str:
        return "receipts_evidence_budget"

    def _evidence_calls(self, messages: list[BaseMessage]) -> int:
        return sum(
            isinstance(m, ToolMessage) and m.name != self.submit_name
            for m in _run_messages(messages)
        )

    def _adjust(self, request: Any) -> Any:
        n = self._evidence_calls(request.messages)
        if n >= self.budget + 2:
            return request.override(tool_choice=self.submit_name)
        if n >= self.budget:
            nudge = HumanMessage(DECIDE_NOW.format(n=n), additional_kwargs={"casework_nudge": True})
            return request.override(messages=[*request.messages, nudge])
        return request

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(self._adjust(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await handler(self._adjust(request))

    def _repeat(self, request: Any) -> ToolMessage | None:
        call = request.tool_call
        state = request.state or {}
        messages = (
            state.get("messages", []) if isinstance(state, dict) else getattr(state, "messages", [])
        )
        run = _run_messages(messages)
        if call["name"] == self.submit_name:
            # A decision needs the primary evidence: a submit before it is sent back (as an
            # error, so the run goes on) instead of ending the run on a guess.
            if not any(isinstance(m, ToolMessage) and m.name == PRIMARY for m in run):
                return ToolMessage(
                    EVIDENCE_FIRST, tool_call_id=call["id"], name=call["name"], status="error"
                )
            return None
        if any(isinstance(m, ToolMessage) and m.name == call["name"] for m in run):
            return ToolMessage(
                REPEATED.format(tool=call["name"]), tool_call_id=call["id"], name=call["name"]
            )
        return None

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._repeat(request) or handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._repeat(request) or await handler(request)


def render_system_prompt() -> str:
    definitions = "\n".join(f"- {name}: {text}" for name, text in LABEL_DEFINITIONS.items())
    return render("system", label_definitions=definitions)


def render_task(ref: WordRef) -> str:
    return render(
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
) -> ReactAgent[LabelDecision]:
    """The validation agent over ``deps`` with ``model``; reusable across words."""
    return ReactAgent(
        model=model,
        tools=build_tools(deps),
        decision_model=LabelDecision,
        system_prompt=render_system_prompt(),
        name="receipts-validator",
        context_schema=WordRef,
        limits=limits or _limits(deps),
        middleware=[EvidenceBudget(budget=evidence_budget)],
        trace_dir=trace_dir,
    )


def model_name(model: BaseChatModel) -> str:
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def agent_for(deps: ReceiptsDeps, model: BaseChatModel) -> ReactAgent[LabelDecision]:
    """The agent on ``model``, built once per model object and deps cache (building one costs
    ~10 ms of CPU; the harness and the harmoniser decide many words on one model)."""
    if deps.cache is None:
        return build_agent(deps, model, trace_dir=deps.settings.traces_dir)
    found = deps.cached(
        ("agent", id(model)),
        lambda: (model, build_agent(deps, model, trace_dir=deps.settings.traces_dir)),
    )
    if found[0] is not model:  # a recycled id: another model lived here before
        return build_agent(deps, model, trace_dir=deps.settings.traces_dir)
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
    trace: bool = True,
    calibration: Calibration | None = None,
) -> LabelDecision:
    """Decide one word with ``agent``; the policy applied, ``decision.run`` filled."""
    run = agent.run(render_task(ref), context=ref, trace=trace)
    return decision_from_run(run, model=model_name(agent.model), calibration=calibration)
