"""Vanpool's cascades: the rules decide what they are sure of, the bundled model chooses a
reply's bucket where the cue words say nothing, a configured remote model comes last.

* Audits (case manager, location, shift): the rules check rosters against the commute and
  shift rules deterministically (1.00 on every bundled dataset), so they decide every case
  they can compute; the agents run only when the rules cannot (a failed source) and, as the
  remote layer, when a remote model is configured.
* Outreach replies: a cue word settles the bucket (confidence 90); a reply without one goes
  to the bundled model, which chooses among the four buckets (``casework.llm.choice``: each
  bucket scored as its whole answer, its probability the confidence); a reply with an
  escalation cue goes to a person whatever the model says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage, SystemMessage

from casework.apps.vanpool.models import Bucket, OutreachResult
from casework.apps.vanpool.rules import has_escalation_cue, reply_cue
from casework.llm.choice import choose
from casework.llm.local import is_local_model
from casework.runtime.cascade import (
    LOCAL_ROLE,
    Cascade,
    CascadePolicy,
    Layer,
    LayerOutcome,
    cascade_path,
    load_policy,
)
from casework.runtime.decision import Decision, EndReason, RunInfo
from casework.runtime.harness import Run
from casework.runtime.runconfig import RunConfig
from casework.runtime.strategy import Strategy

if TYPE_CHECKING:
    from casework.apps.vanpool.deps import VanpoolDeps

__all__ = [
    "CUE_CONFIDENCE",
    "audit_cascade",
    "bucket_messages",
    "choice_classify",
    "outreach_cascade",
    "rules_reply",
]

CUE_CONFIDENCE = 90.0
"""A reply whose cue words name a bucket."""
NO_CUE_CONFIDENCE = 40.0
"""A reply without one: the rules route it to a person (the spec: unclear -> escalation)."""

_SYSTEM = (
    "You sort replies from vanpool riders to a membership review email into one bucket:\n"
    "acknowledgment: confirms the details, nothing changed\n"
    "question: asks something about the review\n"
    "update: reports a changed home address, work site or shift\n"
    "escalation: disputes the review, is upset, or its intent is unclear\n"
    "Answer with the bucket name only."
)


def bucket_messages(reply: str) -> list[Any]:
    """The prompt: the buckets (the system turn, cached across replies), then the reply."""
    return [SystemMessage(_SYSTEM), HumanMessage(f"Reply:\n{reply[:2000]}")]


def _result(
    bucket: str, confidence: float, reasoning: str, run: RunInfo | None = None
) -> OutreachResult:
    b = Bucket(bucket)
    return OutreachResult(
        verdict="none",
        confidence=confidence,
        reasoning=reasoning[:1200],
        bucket=b,
        hitl_required=b is Bucket.ESCALATION,
        run=run,
    )


def rules_reply(reply: str) -> OutreachResult:
    """The cue words' bucket, sure when a cue named one (the rules layer of the cascade)."""
    cue = reply_cue(reply)
    if cue is None:
        return _result(
            "escalation",
            NO_CUE_CONFIDENCE,
            "No cue word names a bucket: unclear replies go to a person.",
            RunInfo(ended_by=EndReason.RULES, strategy="rules"),
        )
    return _result(
        cue,
        CUE_CONFIDENCE,
        f"A cue word of the {cue} bucket.",
        RunInfo(ended_by=EndReason.RULES, strategy="rules"),
    )


def choice_classify(reply: str, config: RunConfig) -> OutreachResult:
    """The bundled model chooses the bucket (scored options); an escalation cue overrides."""
    model = config.models(LOCAL_ROLE)
    run = Run(
        "vanpool_choice",
        model=config.models.name(LOCAL_ROLE),
        strategy="choice",
        trace_dir=config.traces,
        payload={"reply": reply},
    )
    picked = choose(model, bucket_messages(reply), [b.value for b in Bucket])
    run.count(picked.usage)  # scored options: calls LangChain's callbacks do not see
    bucket, confidence = picked.option, picked.confidence
    reasoning = "The model chose " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(picked.probabilities.items(), key=lambda kv: -kv[1])
    )
    if has_escalation_cue(reply) and bucket != "escalation":
        bucket, confidence = "escalation", CUE_CONFIDENCE
        reasoning += "; an escalation cue word sends it to a person."
    decision = _result(bucket, confidence, reasoning + ".")
    run.end(decision, EndReason.SUBMIT)  # fills decision.run
    return decision


def _remote(role: str) -> Any:
    def configured(deps: VanpoolDeps, config: RunConfig) -> bool:
        return not is_local_model(config.models(role))

    return configured


def _policy(task: str, role: str) -> Any:
    def policy(deps: VanpoolDeps, config: RunConfig) -> CascadePolicy:
        remote = None
        if _remote(role)(deps, config):
            remote = config.models.name(role)
        return (
            load_policy(cascade_path(deps.settings.home, f"vanpool-{task}", remote))
            or CascadePolicy()
        )

    return policy


def _review(kind: type[Decision]) -> Any:
    def undecided(last: Decision | None, outcomes: list[LayerOutcome]) -> Decision:
        said = "; ".join(f"{o.layer} {o.error or o.verdict}" for o in outcomes)
        if isinstance(last, kind):
            return last.model_copy(
                update={
                    "verdict": "NEEDS_REVIEW",
                    "reasoning": f"No layer was sure: {said}."[:1200],
                }
            )
        return kind.model_validate(
            {
                "verdict": "NEEDS_REVIEW",
                "confidence": 0,
                "reasoning": f"No layer was sure: {said}."[:1200],
            }
        )

    return undecided


def audit_cascade(
    task: str, rules: Strategy[Any, Any], agent: Strategy[Any, Any], kind: type[Decision], role: str
) -> Cascade[Any]:
    """Rules, then (with a remote model configured) the agent."""
    return Cascade(
        "cascade",
        [
            Layer("rules", rules, default_threshold=80.0),
            Layer("agent", agent, default_threshold=80.0, remote=True, when=_remote(role)),
        ],
        policy=_policy(task, role),
        undecided=_review(kind),
    )


def outreach_cascade(
    rules: Strategy[Any, Any], choice: Strategy[Any, Any], agent: Strategy[Any, Any], role: str
) -> Cascade[Any]:
    """Cue words, then the bundled model's choice, then (when configured) a remote model."""
    return Cascade(
        "cascade",
        [
            Layer("rules", rules, default_threshold=80.0),
            Layer("choice", choice, default_threshold=60.0),
            Layer("agent", agent, default_threshold=60.0, remote=True, when=_remote(role)),
        ],
        policy=_policy("outreach", role),
        undecided=_review(OutreachResult),
    )
