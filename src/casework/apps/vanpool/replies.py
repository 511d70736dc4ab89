"""A rider's reply and its bucket: the cue words' answer (the rules layer of the outreach
cascade: a cue settles the bucket at confidence 90, a reply without one goes to a person at
40), the prompt the bundled model chooses a bucket with where the cue words say nothing, and
the result either gives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from casework.apps.vanpool.models import Bucket, OutreachResult
from casework.apps.vanpool.reply_cues import reply_cue
from casework.runtime.decision import EndReason, RunInfo

__all__ = ["CUE_CONFIDENCE", "NO_CUE_CONFIDENCE", "bucket_messages", "reply_result", "rules_reply"]

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


def bucket_messages(reply: str, shown: Sequence[tuple[str, str]] = ()) -> list[Any]:
    """The prompt: the buckets (the system turn, cached across replies), the verified
    ``(reply, bucket)`` demonstrations ``shown`` as earlier turns, then the reply."""
    turns: list[Any] = [SystemMessage(_SYSTEM)]
    for text, bucket in shown:
        turns += [HumanMessage(f"Reply:\n{text[:2000]}"), AIMessage(bucket)]
    return [*turns, HumanMessage(f"Reply:\n{reply[:2000]}")]


def reply_result(
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
        return reply_result(
            "escalation",
            NO_CUE_CONFIDENCE,
            "No cue word names a bucket: unclear replies go to a person.",
            RunInfo(ended_by=EndReason.RULES, strategy="rules"),
        )
    return reply_result(
        cue,
        CUE_CONFIDENCE,
        f"A cue word of the {cue} bucket.",
        RunInfo(ended_by=EndReason.RULES, strategy="rules"),
    )
