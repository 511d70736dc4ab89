"""LLM-as-judge with a rubric, and its agreement with the deterministic scores.

The judge has its own model (``--judge-model``), scores one output from 0 to 1 with a short
rationale through a tool call (structured, no free text to parse), and never gates a
deterministic metric: a judge that errs leaves a ``judge_error`` on the case and nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field, ValidationError

from casework.errors import ModelError
from casework.evals.suite import EvalCase

__all__ = [
    "JUDGE_TOOL",
    "Judgement",
    "ajudge",
    "cohen_kappa",
    "default_rubric",
    "judge",
    "judge_agreement",
    "judge_messages",
    "parse_judgement",
]

JUDGE_TOOL = "record_judgement"
_PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
_MAX_JSON = 6000


class Judgement(BaseModel):
    """Record the score of the output against the rubric, with a short rationale."""

    score: float = Field(ge=0, le=1, description="0 (fails the rubric) to 1 (fully meets it).")
    rationale: str = Field(
        default="", max_length=600, description="One or two short sentences: why this score."
    )


@cache
def _prompt(name: str) -> Template:
    return Template((_PROMPTS / name).read_text(encoding="utf-8"))


def default_rubric() -> str:
    """The rubric used when an app declares none."""
    return (_PROMPTS / "default_rubric.md").read_text(encoding="utf-8").strip()


def _json(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_JSON else text[:_MAX_JSON] + "\n… (truncated)"


def judge_messages(
    rubric: str, case: EvalCase, output: Mapping[str, Any] | None
) -> list[BaseMessage]:
    """The judge's prompt: instructions, then the rubric, the case, the reference and the output."""
    system = _prompt("judge.md").substitute(tool=JUDGE_TOOL)
    reference = {k: v for k, v in case.expected.items() if k not in ("tools", "tool_args")}
    body = _prompt("judge_case.md").substitute(
        rubric=rubric.strip(),
        inputs=_json(case.inputs),
        expected=_json(reference or "(none given)"),
        output=_json(dict(output or {})),
    )
    return [SystemMessage(system), HumanMessage(body)]


def _judge_tool() -> StructuredTool:
    return StructuredTool.from_function(
        func=lambda **kwargs: "recorded",
        name=JUDGE_TOOL,
        description=Judgement.__doc__ or "",
        args_schema=Judgement,
    )


def _bind(model: BaseChatModel) -> Any:
    tool = _judge_tool()
    try:
        return model.bind_tools([tool], tool_choice=JUDGE_TOOL)
    except (TypeError, NotImplementedError, ValueError):
        return model.bind_tools([tool])


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_judgement(message: AIMessage) -> Judgement:
    """The judgement from the judge's tool call (or, failing that, a JSON object in its text)."""
    try:
        for tc in message.tool_calls:
            if tc["name"] == JUDGE_TOOL:
                return Judgement.model_validate(tc["args"])
        text = message.content if isinstance(message.content, str) else json.dumps(message.content)
        found = _JSON_OBJECT.search(text)
        if found:
            return Judgement.model_validate(json.loads(found.group(0)))
    except (ValidationError, json.JSONDecodeError) as exc:
        first = str(exc).splitlines()[0]
        raise ModelError(f"The judge's answer is not a valid judgement ({first}).") from None
    raise ModelError(f"The judge did not call {JUDGE_TOOL}.")


def judge(
    model: BaseChatModel, rubric: str, case: EvalCase, output: Mapping[str, Any] | None
) -> Judgement:
    """Score one output with the rubric (one model call)."""
    return parse_judgement(_bind(model).invoke(judge_messages(rubric, case, output)))


async def ajudge(
    model: BaseChatModel, rubric: str, case: EvalCase, output: Mapping[str, Any] | None
) -> Judgement:
    """Async twin of ``judge``."""
    return parse_judgement(await _bind(model).ainvoke(judge_messages(rubric, case, output)))


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two raters on pass / fail; 1.0 for perfect agreement, None for no items.

    When chance agreement is certain (both raters give one constant answer) kappa is undefined;
    it is reported as 1.0 if they agree and 0.0 if they do not.
    """
    n = len(a)
    if n != len(b):
        raise ValueError("the two raters rated different numbers of items")
    if n == 0:
        return None
    po = sum(1 for x, y in zip(a, b, strict=True) if bool(x) == bool(y)) / n
    pa, pb = sum(map(bool, a)) / n, sum(map(bool, b)) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    if pe >= 1.0:
        return 1.0 if po == 1.0 else 0.0
    return (po - pe) / (1 - pe)


def judge_agreement(
    judge_pass: Sequence[bool], deterministic_pass: Sequence[bool]
) -> dict[str, Any]:
    """Agreement between the judge's pass (score >= threshold) and the deterministic verdict:
    raw agreement, Cohen's kappa and the 2x2 table."""
    n = len(judge_pass)
    table = {"both_pass": 0, "both_fail": 0, "judge_only": 0, "deterministic_only": 0}
    for j, d in zip(judge_pass, deterministic_pass, strict=True):
        key = (
            "both_pass"
            if j and d
            else "both_fail"
            if not j and not d
            else "judge_only"
            if j
            else "deterministic_only"
        )
        table[key] += 1
    return {
        "n": n,
        "agreement": (table["both_pass"] + table["both_fail"]) / n if n else None,
        "kappa": cohen_kappa(judge_pass, deterministic_pass),
        **table,
    }
