"""The structured decision every agent ends with, shared by all apps.

An app's decision model subclasses ``Decision`` (narrowing ``verdict`` to its own ``Literal``
set and adding fields). The submit tool's schema is the decision model without ``run``: the
model fills verdict, confidence, reasoning and evidence; the runtime fills ``run`` (how the
decision was reached) after the run, and strategies without a model fill it themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

__all__ = ["Decision", "EndReason", "Evidence", "RunInfo", "ToolCallRecord", "Verdict"]


class Verdict(StrEnum):
    """Common verdicts; apps may use their own Literal set in their decision model."""

    VALID = "VALID"
    INVALID = "INVALID"
    NEEDS_REVIEW = "NEEDS_REVIEW"


class EndReason(StrEnum):
    """How a run ended. Values are the strings stored in traces, reports and databases."""

    SUBMIT = "submit"
    """The model called the submit tool with a valid decision."""
    RULES = "rules"
    """Deterministic code decided; no model was asked."""
    LIMIT_MODEL_CALLS = "limit:model_calls"
    LIMIT_TOOL_CALLS = "limit:tool_calls"
    LIMIT_RECURSION = "limit:recursion"
    BUDGET_TOKENS = "budget:tokens"
    BUDGET_COST = "budget:cost"
    BUDGET_SECONDS = "budget:seconds"
    NO_DECISION = "no_decision"
    """The model stopped (after a nudge) without submitting."""
    INTERRUPTED = "interrupted"
    """Paused for a human approval; resume the thread to go on."""
    ERROR_MODEL = "error:model"
    """The model's output was unusable twice in a row (the detail says why)."""

    @property
    def decided(self) -> bool:
        """True when the decision came from the model or the rules, not from a fallback."""
        return self in (EndReason.SUBMIT, EndReason.RULES)


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call of a run, as the evaluators see a trajectory."""

    name: str
    args: dict[str, Any]
    id: str
    ok: bool = True
    output: str = ""


class Evidence(BaseModel):
    """One fact a decision rests on, with the citation that lets a person check it."""

    source: str = Field(description="Where the fact came from: a tool name or table.")
    ref: str = Field(
        default="",
        description="What it cites in that source: an id, row, line or path.",
        max_length=200,
    )
    summary: str = Field(default="", description="What it says, in one sentence.", max_length=400)
    fields: dict[str, Any] = Field(default_factory=dict, description="The values it cites.")


class RunInfo(BaseModel):
    """How a decision was reached: filled by the runtime (or a rules strategy), never the model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ended_by: EndReason
    detail: str = ""
    """More on ``ended_by`` (the model error's text, the limit that was hit)."""
    strategy: str = ""
    model: str | None = None
    run_id: str = ""
    thread_id: str = ""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    usage: Any = None
    """A ``casework.runtime.usage.Usage`` (model calls, tokens, seconds, cost)."""
    trace_path: Path | None = None
    interrupts: list[Any] = Field(default_factory=list)

    @property
    def tool_names(self) -> list[str]:
        return [c.name for c in self.tool_calls]


class Decision(BaseModel):
    """A verdict with confidence, reasoning and evidence.

    Apps subclass it for their submit tool; ``run`` is excluded from that tool's schema and
    from ``model_dump()``.
    """

    verdict: str = Field(description="The decision.")
    confidence: float = Field(ge=0, le=100, description="Confidence from 0 to 100.")
    reasoning: str = Field(description="Why, in a few sentences.", max_length=1200)
    evidence: list[Evidence] = Field(default_factory=list)
    run: SkipJsonSchema[RunInfo | None] = Field(default=None, exclude=True)

    @property
    def needs_review(self) -> bool:
        return self.verdict == Verdict.NEEDS_REVIEW

    @property
    def ended_by(self) -> EndReason | None:
        return self.run.ended_by if self.run else None
