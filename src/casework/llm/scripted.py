"""Scripted chat models for tests: they play back tool calls and fail loudly on surprises."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from casework.errors import ModelError

__all__ = ["Responder", "ScriptedChatModel", "call", "say"]

Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]
Responder = Callable[[list[BaseMessage], list[str]], AIMessage]


def call(name: str, /, **args: Any) -> AIMessage:
    """One scripted turn that calls tool ``name`` with ``args``."""
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:10]}", "type": "tool_call"}
        ],
    )


def say(text: str) -> AIMessage:
    """One scripted turn of plain text (no tool call)."""
    return AIMessage(content=text)


class _Script:
    """Shared between a model and its ``bind_tools`` copies; thread-safe."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.position = 0
        self.lock = threading.Lock()

    def next(self, messages: list[BaseMessage]) -> AIMessage:
        with self.lock:
            if self.position >= len(self.steps):
                raise ModelError(
                    f"The scripted model was called {self.position + 1} times but has only "
                    f"{len(self.steps)} steps."
                )
            step = self.steps[self.position]
            self.position += 1
        return step(messages) if callable(step) else step


class ScriptedChatModel(BaseChatModel):
    """Plays back ``steps`` in order, or asks ``responder(messages, tool_names)`` each turn.

    ``latency`` seconds are slept per call (the async path does not block the loop), for
    throughput tests. Token usage is reported as word counts so budgets can be exercised.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    # repr=False: LangChain serialises the model on every call; a long script must not cost.
    steps: list[Any] = Field(default_factory=list, repr=False)
    responder: Any = Field(default=None, repr=False)
    latency: float = 0.0
    model_name: str = "scripted"
    bound_tools: list[str] = Field(default_factory=list)
    script: _Script | None = Field(default=None, repr=False)
    _bound_copies: dict[tuple[str, ...], ScriptedChatModel] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        if self.script is None:
            self.script = _Script(self.steps)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _shared_script(self) -> _Script:
        # Optional only as a field default: model_post_init always sets it.
        assert self.script is not None
        return self.script

    @property
    def calls(self) -> int:
        return self._shared_script().position

    def assert_exhausted(self) -> None:
        script = self._shared_script()
        left = len(script.steps) - script.position
        if left:
            raise AssertionError(f"The scripted model has {left} unused steps.")

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        names = [
            t.name if isinstance(t, BaseTool) else convert_to_openai_tool(t)["function"]["name"]
            for t in tools
        ]
        # An agent binds the same tools before every call; handing back the same copy keeps
        # LangChain's per-model caches warm, as with a provider model's RunnableBinding.
        key = tuple(names)
        bound = self._bound_copies.get(key)
        if bound is None:
            bound = self._bound_copies[key] = self.model_copy(update={"bound_tools": names})
        return bound

    def _respond(self, messages: list[BaseMessage]) -> ChatResult:
        if self.responder is not None:
            message = self.responder(list(messages), list(self.bound_tools))
        else:
            message = self._shared_script().next(list(messages))
        for tc in message.tool_calls:
            if self.bound_tools and tc["name"] not in self.bound_tools:
                raise ModelError(
                    f"The script calls tool {tc['name']!r}, which is not bound "
                    f"(bound: {', '.join(self.bound_tools)})."
                )
        n_in = sum(len(str(m.content).split()) for m in messages)
        n_out = len(str(message.content).split()) + sum(
            len(str(tc["args"])) // 4 for tc in message.tool_calls
        )
        message = message.model_copy(
            update={
                "id": None,
                "tool_calls": [
                    {**tc, "id": tc.get("id") or f"call_{uuid.uuid4().hex[:10]}"}
                    for tc in message.tool_calls
                ],
                "usage_metadata": {
                    "input_tokens": n_in,
                    "output_tokens": n_out,
                    "total_tokens": n_in + n_out,
                },
                "response_metadata": {"model_name": self.model_name},
            }
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            time.sleep(self.latency)
        return self._respond(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            await asyncio.sleep(self.latency)
        return self._respond(messages)
