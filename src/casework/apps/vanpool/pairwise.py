"""Pairwise comparison of two models' answers (the spec's A/B of models, beside
``casework eval compare``, which compares scores): for each case both runs answered, a judge
model says which answer serves the case worker better.

Each pair is asked twice with the order swapped, so a judge that prefers a position cancels
out: an answer wins only when it is preferred in both orders; anything else is a tie. Like
the harness's judge it never gates a deterministic metric.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field, ValidationError

from casework.errors import InputError, ModelError

__all__ = ["PREFERENCE_TOOL", "Pair", "PairwiseResult", "Preference", "compare_answers", "prefer"]

PREFERENCE_TOOL = "record_preference"
_MAX_JSON = 3000

SYSTEM = f"""You compare two answers of a vanpool misuse auditor (Pool Patrol) to the same case.
Prefer the answer whose verdict agrees with the reference, whose reasoning is correct about the
riders' commute miles or shift overlap minutes, names the failing riders by EMP id, cites its
evidence, and is concise and (for replies to riders) polite. Say "tie" when neither is better.
Answer by calling {PREFERENCE_TOOL} exactly once."""


class Preference(BaseModel):
    """Record which of the two answers is better for the case."""

    better: Literal["first", "second", "tie"]
    rationale: str = Field(default="", max_length=400, description="One short sentence: why.")


@dataclass(frozen=True)
class Pair:
    """One case both runs answered."""

    case_id: str
    inputs: Mapping[str, Any]
    expected: Mapping[str, Any]
    a: Mapping[str, Any]
    b: Mapping[str, Any]


@dataclass
class PairwiseResult:
    a_wins: int = 0
    b_wins: int = 0
    ties: int = 0
    errors: int = 0
    cases: list[dict[str, Any]] = field(default_factory=list)

    @property
    def b_win_rate(self) -> float | None:
        """B's share of the decided pairs (None when every pair tied)."""
        decided = self.a_wins + self.b_wins
        return self.b_wins / decided if decided else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "b_win_rate": self.b_win_rate}


def _json(value: Any) -> str:
    text = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_JSON else text[:_MAX_JSON] + "\n… (truncated)"


def _answer(output: Mapping[str, Any]) -> dict[str, Any]:
    """What the judge reads of an answer: the decision, not the run's bookkeeping."""
    keep = ("verdict", "confidence", "reasoning", "evidence", "failed_employees", "failed_checks")
    return {k: output[k] for k in keep if k in output}


def messages(pair: Pair, first: Mapping[str, Any], second: Mapping[str, Any]) -> list[BaseMessage]:
    reference = {k: v for k, v in pair.expected.items() if k not in ("tools", "tool_args")}
    body = (
        f"## Case inputs\n{_json(pair.inputs)}\n\n## Reference\n{_json(reference)}\n\n"
        f"## First answer\n{_json(_answer(first))}\n\n## Second answer\n{_json(_answer(second))}"
    )
    return [SystemMessage(SYSTEM), HumanMessage(body)]


def _parse(message: AIMessage) -> Preference:
    try:
        for tc in message.tool_calls:
            if tc["name"] == PREFERENCE_TOOL:
                return Preference.model_validate(tc["args"])
    except ValidationError as exc:
        raise ModelError(
            f"The judge's preference is not valid ({exc.errors()[0]['msg']})."
        ) from None
    raise ModelError(f"The judge did not call {PREFERENCE_TOOL}.")


def prefer(
    model: BaseChatModel, pair: Pair, first: Mapping[str, Any], second: Mapping[str, Any]
) -> Preference:
    """One judgement of one order (one model call)."""
    tool = StructuredTool.from_function(
        func=lambda **_: "recorded",
        name=PREFERENCE_TOOL,
        description=Preference.__doc__ or "",
        args_schema=Preference,
    )
    return _parse(model.bind_tools([tool]).invoke(messages(pair, first, second)))


def compare_answers(
    model: BaseChatModel,
    pairs: Sequence[Pair],
    on_done: Callable[[], None] | None = None,
) -> PairwiseResult:
    """Judge every pair in both orders; an answer wins only when preferred both times."""
    if not pairs:
        raise InputError(
            "The two runs have no answered case in common; compare runs of one dataset."
        )
    result = PairwiseResult()
    for pair in pairs:
        try:
            ab = prefer(model, pair, pair.a, pair.b).better
            ba = prefer(model, pair, pair.b, pair.a).better
        except ModelError as exc:
            result.errors += 1
            result.cases.append({"case_id": pair.case_id, "winner": None, "error": str(exc)})
        else:
            if (ab, ba) == ("first", "second"):
                winner = "a"
                result.a_wins += 1
            elif (ab, ba) == ("second", "first"):
                winner = "b"
                result.b_wins += 1
            else:  # a tie, or the judge followed the position rather than the answer
                winner = "tie"
                result.ties += 1
            result.cases.append({"case_id": pair.case_id, "winner": winner, "orders": [ab, ba]})
        if on_done is not None:
            on_done()
    return result


def pairs_of(run_a: Any, run_b: Any, limit: int | None = None) -> list[Pair]:
    """The cases both stored runs (``EvalRun``) answered without error, in A's order."""
    by_b = {c.case_id: c for c in run_b.cases}
    pairs = [
        Pair(c.case_id, c.inputs, c.expected, c.output, by_b[c.case_id].output)
        for c in run_a.cases
        if c.case_id in by_b and c.output and by_b[c.case_id].output
    ]
    return pairs[:limit] if limit else pairs
