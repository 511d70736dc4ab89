"""The keywords that sort an employee's reply into a bucket when no model reads it: escalation,
update, question, acknowledgement."""

from __future__ import annotations

__all__ = ["classify_reply_keywords", "has_escalation_cue", "reply_cue"]

ESCALATION_CUES = (
    "dispute",
    "ridiculous",
    "union",
    "complaint",
    "upset",
    "stop emailing",
    "accus",
    "fraud",
    "lawyer",
    "not going to",
    "wrong and",
    "talk to a manager",
    "don't understand",
    "whatever",
)
UPDATE_CUES = (
    "moved",
    "new address",
    "changed",
    "switched",
    "updated",
    "portal",
    "now work",
    "back on",
    "live in",
)
QUESTION_STARTS = (
    "what",
    "how",
    "why",
    "who",
    "which",
    "when",
    "can ",
    "could",
    "is ",
    "do ",
    "does",
)
ACK_CUES = (
    "all good",
    "confirm",
    "correct",
    "no changes",
    "nothing has changed",
    "noted",
    "thanks",
    "thank you",
    "acknowledge",
    "yes",
)


def has_escalation_cue(text: str) -> bool:
    """Whether a reply carries one of the escalation cue words (anger, complaints, lawyers)."""
    t = " ".join(text.lower().split())
    return any(c in t for c in ESCALATION_CUES)


def reply_cue(text: str) -> str | None:
    """The bucket a reply's cue words name (escalation first), or None when none does."""
    t = " ".join(text.lower().split())
    if has_escalation_cue(t):
        return "escalation"
    if any(c in t for c in UPDATE_CUES):
        return "update"
    if "?" in t or t.startswith(QUESTION_STARTS):
        return "question"
    if any(c in t for c in ACK_CUES):
        return "acknowledgment"
    return None


def classify_reply_keywords(text: str) -> str:
    """The rules baseline for reply buckets: cue words, escalation first; unclear -> escalation.

    The spec routes a reply whose intent is unclear to a person, so no cue means escalation.
    """
    return reply_cue(text) or "escalation"
