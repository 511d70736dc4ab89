"""Strategies: ``run(input, deps, config) -> Decision`` per task, registered by name.

``STRATEGIES`` audits a vanpool (the Case Manager's job, the whole lifecycle's entry), by
the names the CLI and the API take: ``cascade`` (the default: the rules audit and verify, a
reply without a cue word goes to the bundled model's bucket choice, a remote model only when
one is configured), ``rules`` (the rules-only auditor) or ``agent`` (the Case Manager agent).
The per-specialist registries serve the evaluation datasets (shift, location, outreach).
Running them for the faces (one audit or many, replies, time, approvals) is ``service``'s job.

The cascades: the rules check rosters against the commute and shift rules deterministically
(1.00 on every bundled dataset), so they decide every case they can compute; the agents run
only when the rules cannot (a failed source) and, as the remote layer, when a remote model is
configured. A reply's cue word settles its bucket; a reply without one goes to the bundled
model, which chooses among the four buckets (``casework.llm.choice``: each bucket scored as
its whole answer, its probability the confidence); a reply with an escalation cue goes to a
person whatever the model says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from casework.apps.vanpool import agent, checks, lifecycle
from casework.apps.vanpool.deps import VanpoolDeps
from casework.apps.vanpool.models import (
    ROLES,
    Bucket,
    CaseManagerResult,
    LocationDecision,
    OutreachResult,
    ShiftDecision,
    check_id,
)
from casework.apps.vanpool.replies import (
    CUE_CONFIDENCE,
    bucket_messages,
    reply_result,
    rules_reply,
)
from casework.apps.vanpool.reply_cues import has_escalation_cue
from casework.llm.choice import choose
from casework.llm.roles import LOCAL_ROLE
from casework.runtime import EndReason, RunConfig, RunInfo, Strategy
from casework.runtime.cascade import Cascade, Layer
from casework.runtime.memory import Memory
from casework.runtime.memory_layer import (
    MEMORY_THRESHOLD,
    demonstration_evidence,
    demonstrations,
    memory_layer,
    novelty_confidence,
)
from casework.runtime.memory_vote import VOTE_SOURCE, VOTE_THRESHOLD, vote_layer

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
    return rules_reply(input.reply)


# -------------------------------------------------------------- learning from review
# The memory of verified buckets (issue 32): a reply close enough to one a person verified
# takes its bucket (the ``memory`` layer, first in the outreach cascade); else, once enough
# replies are verified, the bucket they vote for when such votes proved right (``memory-vote``,
# second); and the bundled model's choice sees the most similar verified replies as
# demonstrations.


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


def _reply_key(input: ReplyInput) -> str:
    return EXAMPLES.key_text({"reply": input.reply})


memory_classify = memory_layer(reply_memory, _reply_key, _recalled)
_vote = vote_layer(reply_memory, _reply_key, _recalled)


def vote_classify(input: ReplyInput, deps: VanpoolDeps, config: RunConfig) -> OutreachResult:
    """The bucket the caller's verified replies vote for, sure only where such votes were
    right 95 % of the time on those replies (``casework.runtime.memory_vote``: a bucket is
    one of four, so replies that are no near repeat of each other still agree on it). A
    reply with an escalation cue is left to the cue words and a person, as in the choice."""
    decision = _vote(input, deps, config)
    if decision.bucket not in (None, Bucket.ESCALATION) and has_escalation_cue(input.reply):
        reasoning = f"{decision.reasoning} An escalation cue word: left to a person."
        return decision.model_copy(update={"confidence": 0.0, "reasoning": reasoning})
    return decision


def choice_classify(input: ReplyInput, deps: VanpoolDeps, config: RunConfig) -> OutreachResult:
    """The bundled model chooses the bucket among the four (scored options), shown the most
    similar verified replies first (recorded as the decision's ``memory`` evidence), less sure
    of a reply far from every verified one (``novelty_confidence``); an escalation cue
    overrides it. The cue-word rules keep their fixed confidence: they do not guess."""
    shown = demonstrations(reply_memory(deps, config), input.reply, DEMONSTRATIONS)
    # Least similar first: the nearest example sits next to the reply it should inform.
    pairs = [(d.key_text, str(d.answer["bucket"])) for d in reversed(shown)]
    run = config.run(
        "vanpool_choice", LOCAL_ROLE, strategy="choice", payload={"reply": input.reply}
    )
    picked = choose(
        config.models(LOCAL_ROLE), bucket_messages(input.reply, pairs), [b.value for b in Bucket]
    )
    run.count(picked.usage)  # scored options: calls LangChain's callbacks do not see
    bucket, confidence = picked.option, picked.confidence
    reasoning = "The model chose " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(picked.probabilities.items(), key=lambda kv: -kv[1])
    )
    # Once the caller has verified replies, a reply unlike all of them is a guess about this
    # team's conventions: less sure, so it reaches a person and becomes an example.
    nearest = shown[0].similarity if shown else None
    scaled = novelty_confidence(confidence, nearest)
    if scaled != confidence:
        reasoning += f"; confidence {confidence:g} -> {scaled:g}, the nearest verified reply "
        reasoning += f"at similarity {nearest:.2f}"
        confidence = scaled
    if has_escalation_cue(input.reply) and bucket != "escalation":
        bucket, confidence = "escalation", CUE_CONFIDENCE
        reasoning += "; an escalation cue word sends it to a person."
    decision = reply_result(bucket, confidence, reasoning + ".")
    decision.evidence = [*demonstration_evidence(shown), *decision.evidence]
    run.end(decision, EndReason.SUBMIT)  # fills decision.run
    return decision


def agent_classify(input: ReplyInput, deps: VanpoolDeps, config: RunConfig) -> OutreachResult:
    """The classifier role's bucket, asked once under the runtime's harness."""
    run = config.run(
        "vanpool_classify",
        ROLES["classify_reply"],
        strategy="agent",
        payload={"reply": input.reply},
    )
    bucket = agent.classify_with_model(config, input.reply, run.config())
    decision = _bucket_result(bucket)
    run.end(decision, EndReason.SUBMIT)  # fills decision.run
    return decision


# -- the cascades: the rules, then (with a remote model configured) the agent; a reply's
# bucket has the bundled model's choice between them. The stored policy is per task.

STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "cascade": Cascade(
        "vanpool-case-manager",
        [
            Layer("rules", rules_audit),
            Layer("agent", agent_audit, remote=True),
        ],
        decision=CaseManagerResult,
        role=ROLES["case_manager"],
    ),
    "rules": rules_audit,
    "agent": agent_audit,
}
LOCATION_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_location,
    "agent": agent_location,
    "cascade": Cascade(
        "vanpool-location",
        [
            Layer("rules", rules_location),
            Layer("agent", agent_location, remote=True),
        ],
        decision=LocationDecision,
        role=ROLES["location_specialist"],
    ),
}
SHIFT_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_shift,
    "agent": agent_shift,
    "cascade": Cascade(
        "vanpool-shift",
        [
            Layer("rules", rules_shift),
            Layer("agent", agent_shift, remote=True),
        ],
        decision=ShiftDecision,
        role=ROLES["shift_specialist"],
    ),
}
OUTREACH_STRATEGIES: dict[str, Strategy[Any, Any]] = {
    "rules": rules_classify,
    "memory": memory_classify,
    VOTE_SOURCE: vote_classify,
    "choice": choice_classify,
    "agent": agent_classify,
    "cascade": Cascade(
        "vanpool-outreach",
        [
            Layer("memory", memory_classify, default_threshold=MEMORY_THRESHOLD),
            Layer(VOTE_SOURCE, vote_classify, default_threshold=VOTE_THRESHOLD),
            Layer("rules", rules_classify),
            Layer("choice", choice_classify, default_threshold=60.0),
            Layer("agent", agent_classify, default_threshold=60.0, remote=True),
        ],
        decision=OutreachResult,
        role=ROLES["classify_reply"],
    ),
    # The cascade without a model (the memory, the vote, the cue words; nobody sure: a
    # person): what learning from review does when no model is at hand.
    "memory-rules": Cascade(
        "vanpool-outreach",
        [
            Layer("memory", memory_classify, default_threshold=MEMORY_THRESHOLD),
            Layer(VOTE_SOURCE, vote_classify, default_threshold=VOTE_THRESHOLD),
            Layer("rules", rules_classify),
        ],
        decision=OutreachResult,
        role=ROLES["classify_reply"],
        name="memory-rules",
    ),
}
