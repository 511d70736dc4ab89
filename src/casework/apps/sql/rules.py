"""Deterministic rules of the sql app: screening questions that must not be answered, and
the confidence of a final answer. Pure functions with named thresholds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from casework.apps.sql.models import MAX_QUESTION_CHARS, ConfidenceSource

__all__ = [
    "INVALID_CAP",
    "JUDGE_PASS",
    "JUDGE_WEIGHT",
    "MIN_PREFIX",
    "OWN_WEIGHT",
    "REFUSAL_CAP",
    "Refusal",
    "combine_confidence",
    "names_schema",
    "normalize_sql",
    "screen_question",
]

JUDGE_PASS = 0.7
"""A judge score at or above this is good enough to submit; below it the agent fixes the query."""
OWN_WEIGHT = 0.4
JUDGE_WEIGHT = 0.6
INVALID_CAP = 0.3
"""Highest confidence of an answer whose query fails structural validation."""
REFUSAL_CAP = 0.1
"""Highest confidence of a refusal (no query)."""
MIN_PREFIX = 4
"""A question word this long that begins a schema word names it ("weigh", ``weight``)."""

RefusalKind = Literal[
    "malformed", "destructive", "injection", "sensitive", "off_topic", "unanswerable"
]


@dataclass(frozen=True)
class Refusal:
    kind: RefusalKind
    reason: str


_INJECTION = re.compile(
    r"ignore (all |any )?(the )?(previous|prior|above|earlier|your) (instructions|rules|prompt)"
    r"|disregard (all |the |your )?(previous |prior )?(instructions|rules)"
    r"|(reveal|show|print|repeat) (me )?(your|the) (system )?(prompt|instructions)"
    r"|system prompt|you are now|developer mode|jailbreak|new instructions:"
    r"|pretend (that )?you|act as (an? )?(admin|dba|root|unrestricted)"
    r"|'\s*or\s+'?1'?\s*=\s*'?1|;\s*--|\bunion\s+select\b|;\s*(drop|delete|update|insert)\b",
    re.IGNORECASE,
)
_DESTRUCTIVE_ANYWHERE = re.compile(
    r"\b(delete|drop|truncate|wipe|erase|purge|destroy|overwrite)\b"
    r"|\binsert\s+into\b|\bupdate\s+\w+\s+set\b|\balter\s+table\b|\bcreate\s+(table|index|view|user)\b",
    re.IGNORECASE,
)
_DESTRUCTIVE_IMPERATIVE = re.compile(
    r"^\s*(please\s+)?(can you\s+|could you\s+)?(update|modify|change|set|reset|disable|enable|"
    r"unblock|block|lock|unlock|grant|revoke|insert|add|create|remove|rename|assign|mark|close|"
    r"resolve|patch|kill|shut\s*down)\b",
    re.IGNORECASE,
)
_SENSITIVE = re.compile(
    r"password|passwd|credential hash|\bhash(es)? of (the )?password|social security|\bssn\b|"
    r"credit card|card number|phone numbers?|home address|date of birth|api keys?|secret keys?|"
    r"private keys?|session tokens?",
    re.IGNORECASE,
)
_BULK = re.compile(
    r"\bdump\b|\b(every|all)\s+(the\s+)?(fields|field|columns|column)\b"
    r"|\b(whole|entire|full)\s+\w*\s*table\b",
    re.IGNORECASE,
)
_REVEAL = re.compile(
    r"\b(list|show|give|get|export|dump|print|reveal|display|return|retrieve|send|extract|"
    r"what (is|are)|tell me)\b",
    re.IGNORECASE,
)


def screen_question(question: str) -> Refusal | None:
    """A refusal for questions no query should answer, before any model is asked.

    Off-topic and unanswerable questions need the schema; the agent refuses those itself
    (and ``off_topic`` here only catches a question that shares no word with the schema).
    """
    text = question or ""
    if not text.strip():
        return Refusal("malformed", "The question is empty; ask something about the data.")
    if len(text) > MAX_QUESTION_CHARS:
        return Refusal(
            "malformed",
            f"The question is {len(text)} characters long; ask in at most {MAX_QUESTION_CHARS}.",
        )
    letters = sum(ch.isalpha() for ch in text)
    if letters < 3 or letters / max(1, len(text.strip())) < 0.4:
        return Refusal("malformed", "The question is not readable text; ask it in words.")
    words = re.findall(r"[a-z]+", text.lower())
    if len(words) >= 3 and len(set(words)) == 1:
        return Refusal("malformed", "The question repeats one word; ask it as a sentence.")
    if _INJECTION.search(text):
        return Refusal(
            "injection",
            "The question tries to change my instructions or smuggle SQL; I only answer questions about the data.",
        )
    if _DESTRUCTIVE_ANYWHERE.search(text) or _DESTRUCTIVE_IMPERATIVE.search(text):
        return Refusal(
            "destructive",
            "The request would change or delete data; I only write read-only queries.",
        )
    if _BULK.search(text):
        return Refusal(
            "sensitive",
            "The request asks for whole tables, every column included (credentials among "
            "them); ask for the columns you need.",
        )
    if _SENSITIVE.search(text) and _REVEAL.search(text):
        return Refusal(
            "sensitive",
            "The request asks for sensitive personal data (credentials or private contact details), which I do not return.",
        )
    return None


def names_schema(question_tokens: list[str], schema_terms: frozenset[str]) -> bool:
    """Whether a question names anything of the schema: one of its (tokenised, stemmed)
    words is a word of a table or column name, or a prefix of one ("weigh" for ``weight``;
    at least ``MIN_PREFIX`` letters). Numbers do not count."""
    words = [t for t in question_tokens if not t.isdigit()]
    if any(t in schema_terms for t in words):
        return True
    return any(term.startswith(t) for t in words if len(t) >= MIN_PREFIX for term in schema_terms)


def normalize_sql(query: str) -> str:
    """Whitespace-, case- and trailing-semicolon-insensitive form, to recognise the same query."""
    return re.sub(r"\s+", " ", (query or "").strip().rstrip(";")).strip().lower()


def combine_confidence(
    own: float,
    *,
    has_query: bool,
    valid: bool,
    judge_score: float | None,
    use_judge: bool,
) -> tuple[float, ConfidenceSource]:
    """The answer's confidence and what it rests on.

    - no query (a refusal): at most ``REFUSAL_CAP``;
    - a query failing structural validation: at most ``INVALID_CAP``;
    - judged (v2): ``OWN_WEIGHT`` × own + ``JUDGE_WEIGHT`` × the latest judge score of that query;
    - otherwise (v1, single-pass, or a v2 answer the judge could not score): own × validation (1).
    """
    own = min(1.0, max(0.0, float(own)))
    if not has_query:
        return round(min(own, REFUSAL_CAP), 4), "refusal"
    if not valid:
        return round(min(own, INVALID_CAP), 4), "validation_failed"
    if use_judge and judge_score is not None:
        return round(OWN_WEIGHT * own + JUDGE_WEIGHT * judge_score, 4), "judge"
    return round(own, 4), "validation"
