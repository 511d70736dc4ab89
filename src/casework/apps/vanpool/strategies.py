"""Strategies: ``run(input, deps, config) -> Decision`` per task, registered by name.

``STRATEGIES`` audits a vanpool (the Case Manager's job, the whole lifecycle's entry):
``rules`` (alias ``baseline``) is the rules-only auditor, ``agent`` the Case Manager agent.
The per-specialist registries serve the evaluation datasets (shift, location, outreach).
Running them for the faces (one audit or many, replies, time, approvals) is ``service``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from casework.apps.vanpool import agent, cascade, checks, lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import (
    Bucket,
    CaseManagerResult,
    LocationDecision,
    OutreachResult,
    ShiftDecision,
    check_id,
)
from casework.runtime import EndReason, Run, RunConfig, RunInfo, Strategy
from casework.runtime.cascade import Cascade, Layer
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import (
    MEMORY_THRESHOLD,
    demonstration_evidence,
    demonstrations,
    has_examples,
    memory_layer,
)

__all__ = [
    "EXAMPLES",
    "LOCATION_STRATEGIES",
    "OUTREACH_STRATEGIES",
    "SHIFT_STRATEGIES",
    "STRATEGIES",
    "AuditInput",
    "ReplyExamples",
    "ReplyInput",
    "ShiftInput",
]


@dataclass(frozen=True)
class AuditInput:
    vanpool_id: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "vanpool_id", check_id("VP", self.vanpool_id))


@dataclass(frozen=True)
class ShiftInput:
    employee_ids: tuple[str, ...]
    """The group; empty with a ``vanpool_id``: that vanpool's riders."""
    on: date | None = None
    vanpool_id: str | None = None


@dataclass(frozen=True)
class ReplyInput:
    reply: str


def _rules_info() -> RunInfo:
    return RunInfo(ended_by=EndReason.RULES, strategy="rules")


def rules_audit(input: AuditInput, deps: VanpoolDeps, config: RunConfig) -> CaseManagerResult:
    result, _ = lifecycle.audit_vanpool(deps, input.vanpool_id)
    return result.model_copy(update={"run": _rules_info()})


def agent_audit(input: AuditInput, deps: VanpoolDeps, config: RunConfig) -> CaseManagerResult:
    return agent.run_case_manager(deps, config, input.vanpool_id)


def rules_location(input: AuditInput, deps: VanpoolDeps, config: RunConfig) -> LocationDecision:
    return checks.location_check(deps, deps.repo.get_vanpool(input.vanpool_id))


def agent_location(input: AuditInput, deps: VanpoolDeps, config: RunConfig) -> LocationDecision:
    return agent.run_location_specialist(deps, config, input.vanpool_id)


def _group(input: ShiftInput, deps: VanpoolDeps) -> list[str]:
    """The employees a shift check compares: the ones named, else the vanpool's riders."""
    if input.employee_ids or not input.vanpool_id:
        return [check_id("EMP", e) for e in input.employee_ids]
    vanpool = deps.repo.get_vanpool(check_id("VP", input.vanpool_id))
    return [e.employee_id for e in vanpool.riders]


def rules_shift(input: ShiftInput, deps: VanpoolDeps, config: RunConfig) -> ShiftDecision:
    employees = [deps.repo.get_employee(e) for e in _group(input, deps)]
    vanpool = deps.repo.get_vanpool(input.vanpool_id) if input.vanpool_id else None
    return checks.shift_check(employees, input.on or deps.now().date(), vanpool)


def agent_shift(input: ShiftInput, deps: VanpoolDeps, config: RunConfig) -> ShiftDecision:
    ids = _group(input, deps)
    return agent.run_shift_specialist(deps, config, ids, input.vanpool_id, input.on)


def _bucket_result(bucket: str, run: RunInfo | None = None) -> OutreachResult:
    b = Bucket(bucket)
    return OutreachResult(
        verdict="none",
        reasoning=f"Classified as {b.value}.",
        bucket=b,
        hitl_required=b is Bucket.ESCALATION,
        run=run,
    )


def rules_classify(input: ReplyInput, deps: VanpoolDeps, config: RunConfig) -> OutreachResult:
    """The cue words' bucket: confidence 90 when a cue named it, 40 for the unclear default."""
    return cascade.rules_reply(input.reply)


def choice_classify(input: ReplyInput, deps: VanpoolDeps, config: RunConfig) -> OutreachResult:
    """The bundled model chooses the bucket among the four (scored; the escalation guard)."""
    return cascade.choice_classify(input.reply, config)


def agent_classify(input: ReplyInput, deps: VanpoolDeps, config: RunConfig) -> OutreachResult:
    """The classifier role's bucket, asked once under the runtime's harness."""
    run = Run(
        "vanpool_classify",
        model=config.models.name(agent.ROLES["classify_reply"]),
        strategy="agent",
        trace_dir=config.traces,
        payload={"reply": input.reply},
    )
    bucket = agent.classify_with_model(config, input.reply, run.config())
    decision = _bucket_result(bucket)
    run.end(decision, EndReason.SUBMIT)  # fills decision.run
    return decision


STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_audit,
    "baseline": rules_audit,
    "agent": agent_audit,
    "cascade": cascade.audit_cascade(
        "case-manager", rules_audit, agent_audit, CaseManagerResult, agent.ROLES["case_manager"]
    ),
}
LOCATION_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_location,
    "baseline": rules_location,
    "agent": agent_location,
    "cascade": cascade.audit_cascade(
        "location",
        rules_location,
        agent_location,
        LocationDecision,
        agent.ROLES["location_specialist"],
    ),
}
SHIFT_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_shift,
    "baseline": rules_shift,
    "agent": agent_shift,
    "cascade": cascade.audit_cascade(
        "shift", rules_shift, agent_shift, ShiftDecision, agent.ROLES["shift_specialist"]
    ),
}
OUTREACH_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_classify,
    "baseline": rules_classify,
    "choice": choice_classify,
    "agent": agent_classify,
    "cascade": cascade.outreach_cascade(
        rules_classify, choice_classify, agent_classify, agent.ROLES["classify_reply"]
    ),
}


# -------------------------------------------------------------- learning from review
# The memory of verified buckets (issue 32): a reply close enough to one a person verified
# takes its bucket (the ``memory`` layer, first in the outreach cascade), and the bundled
# model's choice sees the most similar verified replies as demonstrations.


class ReplyExamples:
    """``AppSpec.examples``: a vanpool example is an outreach reply (its text is the key it is
    found by) and its verified bucket."""

    def key_text(self, inputs: dict[str, Any]) -> str:
        reply = inputs.get("reply")
        if not isinstance(reply, str) or not reply.strip():
            raise ValueError("a vanpool example is an outreach reply: inputs need a 'reply' text")
        return reply.strip()

    def answer_of(self, expected: dict[str, Any]) -> dict[str, Any]:
        bucket = expected.get("bucket")
        buckets = [b.value for b in Bucket]
        if bucket not in buckets:
            raise ValueError(f"expected.bucket must be one of {', '.join(buckets)}, not {bucket!r}")
        return {"bucket": bucket}


EXAMPLES = ReplyExamples()
DEMONSTRATIONS = 4
"""Verified replies shown to the bundled model before the reply it classifies."""


def reply_memory(deps: VanpoolDeps, config: RunConfig) -> Memory:
    """The verified replies in the deps' store (an evaluation's own store in an evaluation),
    as the run's caller sees them."""
    return Memory(deps.repo.engine, "vanpool", config.caller)


def _recalled(answer: dict[str, Any] | None, confidence: float, reasoning: str) -> OutreachResult:
    if answer is None:
        return OutreachResult(verdict="NEEDS_REVIEW", confidence=0, reasoning=reasoning)
    decision = _bucket_result(str(answer["bucket"]))
    return decision.model_copy(update={"confidence": confidence, "reasoning": reasoning})


memory_classify = memory_layer(
    reply_memory, lambda input: EXAMPLES.key_text({"reply": input.reply}), _recalled
)


def shown_choice_classify(
    input: ReplyInput, deps: VanpoolDeps, config: RunConfig
) -> OutreachResult:
    """The bundled model's bucket choice, shown the most similar verified replies first
    (recorded as the decision's ``memory`` evidence)."""
    shown = demonstrations(reply_memory(deps, config), input.reply, DEMONSTRATIONS)
    # Least similar first: the nearest example sits next to the reply it should inform.
    pairs = [(d.key_text, str(d.answer["bucket"])) for d in reversed(shown)]
    decision = cascade.choice_classify(input.reply, config, pairs)
    decision.evidence = [*demonstration_evidence(shown), *decision.evidence]
    return decision


_OUTREACH = cascade.outreach_cascade(
    rules_classify, shown_choice_classify, agent_classify, agent.ROLES["classify_reply"]
)
OUTREACH_STRATEGIES["memory"] = memory_classify
OUTREACH_STRATEGIES["choice"] = shown_choice_classify
OUTREACH_STRATEGIES["cascade"] = Cascade(
    "cascade",
    [
        Layer(
            "memory",
            memory_classify,
            default_threshold=MEMORY_THRESHOLD,
            when=has_examples(reply_memory),
        ),
        *_OUTREACH.layers,
    ],
    policy=_OUTREACH.policy,
    undecided=_OUTREACH.undecided,
)
