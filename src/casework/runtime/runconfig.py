"""``RunConfig``: how one run goes, beside what it decides (openai-agents' ``RunConfig``).

A strategy is ``run(input, deps, config)``. The deps are the app's stores and settings,
shared by every run; the config is the run's own: the models it asks for by role, its
budgets, where its trace goes, who hears its progress, and whose run it is. The CLI, the
API, the web UI and the evaluation harness fill it (the harness with each case's recorded or
replayed models); strategies read it and nothing else for these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casework.llm.roles import RoleModels
from casework.runtime.harness import Run

if TYPE_CHECKING:
    from casework.config import Limits, Settings
    from casework.runtime.context import Caller

__all__ = ["EventSink", "RunConfig"]

EventSink = Callable[[dict[str, Any]], None]
"""Receives a run's progress events as they happen (documents' ``{text}`` and ``{tool,
input}``, hed's ``{type: "step", node, ...}``): the CLI shows them, the API records or
streams them."""


@dataclass(frozen=True)
class RunConfig:
    models: RoleModels
    """``models(role)`` -> the chat model of a role, and ``models.name(role)`` what the run's
    ``RunInfo.model`` says it ran."""
    limits: Limits | None = None
    """The run's budgets (model and tool calls, tokens, cost, seconds); None: each agent's
    own, from the settings' limits and the app's caps."""
    traces: Path | None = None
    """The folder the run's JSONL trace goes to; None: no trace."""
    events: EventSink | None = None
    """Who hears the run's progress; None: nobody."""
    caller: Caller | None = None
    """Whose run this is (the tenant its tools and stores act for); None: the local operator."""

    @classmethod
    def of(
        cls,
        settings: Settings,
        model: str | None = None,
        *,
        vision: str | None = None,
        api_key: str | None = None,
        events: EventSink | None = None,
        caller: Caller | None = None,
        roles: dict[str, str] | None = None,
    ) -> RunConfig:
        """A run on ``settings``: its models (``model`` for every text role: ``--model``, a
        request's model; ``roles`` for the roles it names: ``--judge-model``), its trace in
        the settings' trace folder, each agent's own budgets."""
        return cls(
            models=RoleModels(settings, model, vision=vision, api_key=api_key, roles=roles),
            traces=settings.traces_dir,
            events=events,
            caller=caller,
        )

    def run(
        self,
        agent: str,
        role: str | None,
        *,
        strategy: str = "",
        thread_id: str | None = None,
        payload: Any = None,
        trace: bool = True,
    ) -> Run:
        """A run of ``agent`` on the model of ``role`` (its name in the trace and the
        ``RunInfo``; None: the run asks no model), traced in the config's folder
        (``trace=False``: not traced)."""
        return Run(
            agent,
            model=self.models.name(role) if role is not None else None,
            strategy=strategy,
            trace_dir=self.traces if trace else None,
            thread_id=thread_id,
            payload=payload,
        )

    def emit(self, event: dict[str, Any]) -> None:
        """Hand ``event`` to the sink, if the run has one."""
        if self.events is not None:
            self.events(event)
