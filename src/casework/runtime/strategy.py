"""Strategies: how an app decides one input. Plain functions, registered by name.

Every app offers its strategies (``rules``, ``baseline``, ``agent``, ...) as functions
``run(input, deps) -> Decision``. The CLI, the API and the evaluation harness all call the
same function with the same kind of deps, so what is measured is what users run.

``deps`` is the app's frozen deps dataclass (stores, settings, clock, ...). It carries a
``models`` callable (``ModelSource``) that returns the chat model for a role; the harness
swaps in one that records or replays per case. A strategy never reads global state.

The returned decision carries ``decision.run`` (``RunInfo``: how it ended, tool calls, usage,
trace): the runtime fills it for agents; rules strategies set ``EndReason.RULES``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from langchain_core.language_models import BaseChatModel

from casework.runtime.decision import Decision

__all__ = ["ModelSource", "Strategy", "StrategyRegistry"]

InputT = TypeVar("InputT", contravariant=True)
DepsT = TypeVar("DepsT", contravariant=True)

ModelSource = Callable[[str], BaseChatModel]
"""``models(role)`` -> the chat model for a role (``default``, ``orchestrator``, ``judge``, ...)."""


class Strategy(Protocol[InputT, DepsT]):
    """``run(input, deps) -> Decision``: one way an app decides one input."""

    def __call__(self, input: InputT, deps: DepsT, /) -> Decision: ...


StrategyRegistry = Mapping[str, Strategy[Any, Any]]
