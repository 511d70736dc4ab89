"""The structured decision every agent ends with, shared by all apps.

An app's decision model subclasses ``Decision`` (narrowing ``verdict`` to its own ``Literal``
set and adding fields). The submit tool's schema is the decision model without ``run``: the
model fills verdict, confidence, reasoning and evidence; the runtime fills ``run`` (how the
decision was reached) after the run, and strategies without a model fill it themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "Decision",
    "EndReason",
    "Evidence",
    "RunInfo",
    "ToolCallRecord",
    "Verdict",
    "ground_evidence",
]


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

    source: str = Field(
        description="Where the fact came from: a tool name or table.",
        json_schema_extra={"maxLength": 64},
    )
    ref: str = Field(
        default="",
        description="What it cites in that source: an id, row, line or path.",
        max_length=200,
        json_schema_extra={"maxLength": 80},
    )
    # The schema asks the model for less than validation accepts: a small local model writes
    # each character, and rules strategies may cite longer text.
    summary: str = Field(
        default="",
        description="What it says, in one short sentence.",
        max_length=400,
        json_schema_extra={"maxLength": 160},
    )
    fields: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict)
    """The values it cites. Not in the model's schema: the runtime copies them from the cited
    tool's output (``ground_evidence``), and rules strategies fill them directly."""


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
    decided_by: str | None = None
    """In a cascade: the layer whose answer stood (None when no layer was sure)."""
    layers: list[Any] = Field(default_factory=list)
    """In a cascade: each layer's ``casework.runtime.cascade.LayerOutcome``, in order."""

    @property
    def tool_names(self) -> list[str]:
        return [c.name for c in self.tool_calls]


EVIDENCE_ITEMS_MAX = 5
"""Evidence items one decision may cite (a small model writes each one token by token)."""


class Decision(BaseModel):
    """A verdict with confidence, reasoning and evidence.

    Apps subclass it for their submit tool; ``run`` is excluded from that tool's schema and
    from ``model_dump()``.
    """

    verdict: str = Field(description="The decision.")
    confidence: float = Field(ge=0, le=100, description="Confidence from 0 to 100.")
    reasoning: str = Field(description="Why, in a few sentences.", max_length=1200)
    evidence: list[Evidence] = Field(
        default_factory=list,
        # in the schema only: rules strategies may cite more (every rider of a vanpool)
        json_schema_extra={"maxItems": EVIDENCE_ITEMS_MAX},
        description="The facts it rests on, at most 5: source is the tool that gave the fact, "
        "ref what it cites there (an id, line or key).",
    )
    run: SkipJsonSchema[RunInfo | None] = Field(default=None, exclude=True)

    @property
    def needs_review(self) -> bool:
        return self.verdict == Verdict.NEEDS_REVIEW

    @property
    def ended_by(self) -> EndReason | None:
        return self.run.ended_by if self.run else None


EVIDENCE_FIELDS_MAX = 12
"""Values copied from a tool's output into one grounded evidence item."""


def _scalars(obj: dict[str, Any]) -> dict[str, Any]:
    """The object's scalar values (and short lists of scalars), at most EVIDENCE_FIELDS_MAX."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        scalar = isinstance(value, str | int | float | bool) or value is None
        short_list = (
            isinstance(value, list)
            and len(value) <= 6
            and all(isinstance(v, str | int | float | bool) for v in value)
        )
        if scalar or short_list:
            out[key] = value
        if len(out) >= EVIDENCE_FIELDS_MAX:
            break
    return out


def _cited_object(data: Any, ref: str, depth: int = 0) -> dict[str, Any] | None:
    """The innermost object in ``data`` with a scalar value equal to ``ref`` (case-insensitive)."""
    if depth > 4:
        return None
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, dict | list):
                found = _cited_object(value, ref, depth + 1)
                if found is not None:
                    return found
        if any(
            isinstance(v, str | int | float) and str(v).strip().lower() == ref
            for v in data.values()
        ):
            return data
    elif isinstance(data, list):
        for item in data:
            found = _cited_object(item, ref, depth + 1)
            if found is not None:
                return found
    return None


def ground_evidence(evidence: list[Evidence], tool_calls: list[ToolCallRecord]) -> list[Evidence]:
    """Fill each cited item's ``fields`` from the output of the tool it cites.

    The model cites (``source`` = a tool it called, ``ref`` = an id, line or key in that
    tool's output) and summarises; the values come from what the tool really returned, so a
    citation can be checked and a small model need not copy tool output into its answer.
    The object in the output carrying ``ref`` as a value is used when there is one, else the
    output's top-level values, and ``source`` becomes the tool's exact name. Items that
    already have fields, or cite no tool of the run, are kept as they are.
    """
    outputs: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for call in tool_calls:
        if call.ok and call.output:
            outputs.setdefault(call.name.strip().lower(), []).append(call.output)
            names[call.name.strip().lower()] = call.name

    def cited_tool(source: str) -> str:
        # A small model writes "get_employee_shifts tool" or "functions.get_employee_shifts":
        # the one tool of the run that the source names.
        source = source.strip().lower()
        if source in outputs:
            return source
        hits = [name for name in outputs if name in source]
        return hits[0] if len(hits) == 1 else source

    grounded: list[Evidence] = []
    for item in evidence:
        tool = cited_tool(item.source)
        texts = outputs.get(tool)
        if item.fields or not texts:
            grounded.append(item)
            continue
        ref = item.ref.strip().lower()
        fields: dict[str, Any] | None = None
        for text in reversed(texts):  # the latest call first
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            cited = _cited_object(data, ref) if ref else None
            if cited is not None:
                fields = _scalars(cited)
                break
            if fields is None:
                fields = _scalars(data) if isinstance(data, dict) else {"output": text[:300]}
        grounded.append(item.model_copy(update={"source": names[tool], "fields": fields or {}}))
    return grounded
