"""Agent middleware every app can use: an evidence budget that keeps small models on track,
and settings for every model call of an agent."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

__all__ = ["DECIDE_NOW", "EVIDENCE_FIRST", "REPEATED", "EvidenceBudget", "ModelSettings"]

DECIDE_NOW = (
    "You have gathered {n} pieces of evidence. Call {submit} now with your decision, "
    "confidence and reasoning."
)
REPEATED = "You already called {tool}; its result is above. Use it, or call {submit}."
EVIDENCE_FIRST = "Look at the evidence first: call {primary}, then decide."
NUDGE = "casework_nudge"
"""Marks the messages this middleware adds, so they do not start a new run's window."""


def _run_messages(messages: list[BaseMessage]) -> list[BaseMessage]:
    """The messages after the last task message (a thread may hold earlier runs)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, HumanMessage) and not m.additional_kwargs.get(NUDGE):
            return list(messages[i + 1 :])
    return list(messages)


class EvidenceBudget(AgentMiddleware):
    """A decision is accepted only after the ``primary`` tool answered, each evidence tool
    answers once per run, and after ``budget`` evidence calls the next model call ends with a
    request to decide (appended at the end, so a local model's prompt cache stays warm). Past
    ``budget + 2`` evidence calls the submit tool is forced.

    ``evidence_tools``: the tools that count (None: every tool but the submit tool).
    """

    def __init__(
        self,
        *,
        budget: int,
        submit_name: str = "submit_decision",
        evidence_tools: Collection[str] | None = None,
        primary: str | None = None,
        name: str = "evidence_budget",
    ) -> None:
        super().__init__()
        self.budget = budget
        self.submit_name = submit_name
        self.evidence_tools = None if evidence_tools is None else frozenset(evidence_tools)
        self.primary = primary
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def _counts(self, tool: str | None) -> bool:
        if tool == self.submit_name:
            return False
        return self.evidence_tools is None or tool in self.evidence_tools

    def _evidence_calls(self, messages: list[BaseMessage]) -> int:
        return sum(
            isinstance(m, ToolMessage) and self._counts(m.name) for m in _run_messages(messages)
        )

    def _adjust(self, request: Any) -> Any:
        n = self._evidence_calls(request.messages)
        if n >= self.budget + 2:
            return request.override(tool_choice=self.submit_name)
        if n >= self.budget:
            nudge = HumanMessage(
                DECIDE_NOW.format(n=n, submit=self.submit_name), additional_kwargs={NUDGE: True}
            )
            return request.override(messages=[*request.messages, nudge])
        return request

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(self._adjust(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await handler(self._adjust(request))

    def _refusal(self, request: Any) -> ToolMessage | None:
        call = request.tool_call
        state = request.state or {}
        messages = (
            state.get("messages", []) if isinstance(state, dict) else getattr(state, "messages", [])
        )
        run = _run_messages(messages)
        if call["name"] == self.submit_name:
            # A decision needs the primary evidence: a submit before it is sent back (as an
            # error, so the run goes on) instead of ending the run on a guess.
            if self.primary and not any(
                isinstance(m, ToolMessage) and m.name == self.primary for m in run
            ):
                return ToolMessage(
                    EVIDENCE_FIRST.format(primary=self.primary),
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                )
            return None
        if self._counts(call["name"]) and any(
            isinstance(m, ToolMessage) and m.name == call["name"] for m in run
        ):
            return ToolMessage(
                REPEATED.format(tool=call["name"], submit=self.submit_name),
                tool_call_id=call["id"],
                name=call["name"],
            )
        return None

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._refusal(request) or handler(request)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._refusal(request) or await handler(request)


class ModelSettings(AgentMiddleware):
    """Settings for every model call of one agent, e.g. ``ModelSettings(max_tokens=1024)`` for
    an agent whose tool arguments are long (the bundled model's default reply budget is 384
    tokens). They reach the model's ``bind_tools`` as a provider takes them; settings a
    request already carries win."""

    def __init__(self, name: str = "model_settings", **settings: Any) -> None:
        super().__init__()
        self.settings = settings
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def _with_settings(self, request: Any) -> Any:
        return request.override(model_settings={**self.settings, **request.model_settings})

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(self._with_settings(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await handler(self._with_settings(request))
