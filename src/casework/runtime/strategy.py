"""Strategies: how an app decides one input. Plain functions, registered by name.

Every app offers its strategies (``rules``, ``baseline``, ``agent``, ...) as functions
``run(input, deps, config) -> Decision``. The CLI, the API and the evaluation harness all call
the same function with the same kind of deps, so what is measured is what users run.

``deps`` is the app's frozen deps dataclass: stores, settings, clock, ... (what every run
shares). ``config`` is the run's own ``RunConfig``: the models by role (``config.models``;
the harness hands in one that records or replays the case), the budgets, where the trace
goes, the event sink and the caller. A strategy never reads global state.

The returned decision carries ``decision.run`` (``RunInfo``: how it ended, the model it ran,
tool calls, usage, trace): the runtime fills it for agents; rules strategies set
``EndReason.RULES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from casework.runtime.decision import Decision

if TYPE_CHECKING:  # an annotation only: the run config imports the harness
    from casework.runtime.runconfig import RunConfig

__all__ = ["Strategy", "StrategyRegistry"]

InputT = TypeVar("InputT", contravariant=True)
DepsT = TypeVar("DepsT", contravariant=True)


class Strategy(Protocol[InputT, DepsT]):
    """``run(input, deps, config) -> Decision``: one way an app decides one input."""

    def __call__(self, input: InputT, deps: DepsT, config: RunConfig, /) -> Decision: ...


StrategyRegistry = Mapping[str, Strategy[Any, Any]]
