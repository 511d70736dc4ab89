"""The structured decision every agent ends with, shared by all apps."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["Decision", "Evidence", "Verdict"]


class Verdict(StrEnum):
    """Common verdicts; apps may use their own Literal set in their decision model."""

    VALID = "VALID"
    INVALID = "INVALID"
    NEEDS_REVIEW = "NEEDS_REVIEW"


class Evidence(BaseModel):
    """One fact a decision rests on."""

    source: str = Field(description="Where the fact came from, e.g. a tool name or table.")
    summary: str = Field(default="", description="What it says, in one sentence.", max_length=400)
    fields: dict[str, Any] = Field(default_factory=dict, description="The values it cites.")


class Decision(BaseModel):
    """A verdict with confidence, reasoning and evidence.

    Apps subclass this (or build their own model with the same fields) for their submit tool.
    """

    verdict: str = Field(description="The decision.")
    confidence: float = Field(ge=0, le=100, description="Confidence from 0 to 100.")
    reasoning: str = Field(description="Why, in a few sentences.", max_length=1200)
    evidence: list[Evidence] = Field(default_factory=list)

    @property
    def needs_review(self) -> bool:
        return self.verdict == Verdict.NEEDS_REVIEW
