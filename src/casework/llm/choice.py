"""Ask a model to choose among fixed options, with the option probabilities as its confidence.

A small model is weak at free-form agent JSON and good at picking one of a few options. The
bundled model scores every option as its whole reply (``LocalChatModel.score_options``: the
sum of the token log-probabilities, each option forced by a grammar), so the answer is always
one of the options and its probability is a real confidence. A model's bias towards some
options, whatever the input, is measured on a content-free input and divided out
(contextual calibration, Zhao et al. 2021: ``p(option | input) / p(option | "N/A")``,
renormalised).

Models that cannot score options (a hosted chat model, a scripted one) answer through a
forced tool call whose only argument is the option, and their pick gets probability 1: a
stored calibration then maps that to how often such picks were right.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field, create_model

from casework.errors import ModelError
from casework.runtime.usage import Usage

__all__ = ["Choice", "OptionScorer", "ScriptedChooser", "choose", "option_bias"]


@runtime_checkable
class OptionScorer(Protocol):
    """A model that can give each option's log-probability as its whole reply."""

    def score_options(
        self, messages: Sequence[BaseMessage], options: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, int | float]]: ...


@dataclass(frozen=True)
class Choice:
    """The option chosen, with the probability of every option."""

    option: str
    probabilities: dict[str, float]
    """Option -> probability (sums to 1), after the bias was divided out."""
    raw: dict[str, float]
    """Option -> probability before the bias correction."""
    scored: bool
    """True when the probabilities are the model's own; False for a plain pick (p = 1)."""
    usage: Usage = field(default_factory=Usage)

    @property
    def confidence(self) -> float:
        """The chosen option's probability, 0-100."""
        return round(100.0 * self.probabilities[self.option], 2)

    def margin(self) -> float:
        """The chosen option's lead over the runner-up, 0-1."""
        ranked = sorted(self.probabilities.values(), reverse=True)
        return ranked[0] - (ranked[1] if len(ranked) > 1 else 0.0)


def _normalise(logprobs: Mapping[str, float]) -> dict[str, float]:
    top = max(logprobs.values())
    weights = {k: math.exp(v - top) for k, v in logprobs.items()}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


def _picked(
    model: BaseChatModel, messages: Sequence[BaseMessage], options: Sequence[str]
) -> tuple[str, Usage]:
    """A model that cannot score options answers by a forced call of ``choose(option)``."""
    schema: type[BaseModel] = create_model(
        "ChooseOption",
        option=(str, Field(description="One of: " + ", ".join(options), json_schema_extra={"enum": list(options)})),
    )  # fmt: skip

    def _noop(option: str) -> str:
        return option

    tool = StructuredTool.from_function(
        func=_noop, name="choose", description="Give your answer.", args_schema=schema
    )
    started = time.perf_counter()
    reply = model.bind_tools([tool], tool_choice="choose").invoke(list(messages))
    calls = getattr(reply, "tool_calls", None) or []
    option = calls[0]["args"].get("option") if calls else None
    if option not in options:
        raise ModelError(f"The model answered {option!r}, which is not one of the options.")
    meta = getattr(reply, "usage_metadata", None) or {}
    usage = Usage(
        model_calls=1,
        input_tokens=int(meta.get("input_tokens", 0)),
        output_tokens=int(meta.get("output_tokens", 0)),
        wall_seconds=time.perf_counter() - started,
    )
    return str(option), usage


def option_bias(
    model: BaseChatModel | OptionScorer, content_free: Sequence[BaseMessage], options: Sequence[str]
) -> dict[str, float] | None:
    """The model's probabilities on a content-free input (the prompt with the case's content
    replaced by "N/A"): its bias, to divide out. None for a model that cannot score options."""
    if not isinstance(model, OptionScorer):
        return None
    logprobs, _ = model.score_options(content_free, options)
    return _normalise(logprobs)


def choose(
    model: BaseChatModel | OptionScorer,
    messages: Sequence[BaseMessage],
    options: Sequence[str],
    *,
    bias: Mapping[str, float] | None = None,
) -> Choice:
    """The option the model prefers for ``messages``, with the probability of each.

    ``bias`` (from ``option_bias``) is divided out before the choice is made, so a model that
    says "PRODUCT_NAME" to everything is not believed when it says it here too.
    """
    options = list(dict.fromkeys(options))
    if len(options) < 2:
        raise ValueError("choose needs at least two options")
    if not isinstance(model, OptionScorer):
        option, usage = _picked(model, messages, options)
        probs = {o: 1.0 if o == option else 0.0 for o in options}
        return Choice(option, probs, dict(probs), scored=False, usage=usage)
    started = time.perf_counter()
    logprobs, counts = model.score_options(messages, options)
    raw = _normalise(logprobs)
    probs = raw
    if bias:
        # floor the bias so an option the content-free input never picks is not blown up
        adjusted = {o: raw[o] / max(float(bias.get(o, 1.0)), 1e-3) for o in options}
        total = sum(adjusted.values())
        probs = {o: v / total for o, v in adjusted.items()}
    option = max(options, key=lambda o: (probs[o], -options.index(o)))
    usage = Usage(
        model_calls=1,
        input_tokens=int(counts.get("input_tokens", 0)),
        output_tokens=int(counts.get("output_tokens", 0)),
        wall_seconds=time.perf_counter() - started,
    )
    return Choice(option, probs, raw, scored=True, usage=usage)


class ScriptedChooser:
    """A test double that scores options from a table: ``{"option": logprob}`` per call, in
    order, or one mapping for every call. It fails loudly when asked more than scripted."""

    def __init__(self, *scores: Mapping[str, float], repeat: bool = False) -> None:
        self.scores = [dict(s) for s in scores]
        self.repeat = repeat
        self.calls: list[tuple[list[BaseMessage], list[str]]] = []
        self.model_name = "scripted-chooser"

    def score_options(
        self, messages: Sequence[BaseMessage], options: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, int | float]]:
        index = len(self.calls)
        self.calls.append((list(messages), list(options)))
        if index >= len(self.scores) and not (self.repeat and self.scores):
            raise ModelError(
                f"ScriptedChooser was asked {index + 1} times; scripted {len(self.scores)}."
            )
        table = self.scores[min(index, len(self.scores) - 1)]
        missing = [o for o in options if o not in table]
        if missing:
            raise ModelError(f"ScriptedChooser has no score for {', '.join(missing)}.")
        return {o: table[o] for o in options}, {
            "input_tokens": 10,
            "output_tokens": 1,
            "seconds": 0.0,
        }
