"""Record a real run's model calls to a cassette and replay them offline, deterministically.

A cassette is a JSONL file, one line per model call: the request's fingerprint (messages and
bound tool schemas, without volatile ids) and the response message. Replay looks each
request up by fingerprint; a request that was never recorded is drift, and fails with a
message that says whether the prompt or a tool schema changed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from casework.errors import ConfigError, ReplayDriftError

__all__ = ["Cassette", "RecordingChatModel", "ReplayChatModel", "fingerprint"]


def _norm_message(m: BaseMessage) -> dict[str, Any]:
    content = m.content if isinstance(m.content, str) else json.dumps(m.content, sort_keys=True)
    data: dict[str, Any] = {"type": m.type, "content": content}
    if isinstance(m, AIMessage) and m.tool_calls:
        data["tool_calls"] = [{"name": c["name"], "args": c["args"]} for c in m.tool_calls]
    if m.type == "tool":
        data["name"] = getattr(m, "name", None)
    return data


def fingerprint(messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Hashes of the prompt and of the tool schemas, and of both together."""
    prompt = json.dumps([_norm_message(m) for m in messages], sort_keys=True, default=str)
    schemas = json.dumps(
        sorted(tools, key=lambda t: t.get("function", {}).get("name", "")),
        sort_keys=True,
        default=str,
    )
    return {"prompt": _digest(prompt), "tools": _digest(schemas), "key": _digest(prompt + schemas)}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Cassette:
    """The recorded calls of one or more runs, in a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        if path.exists():
            with path.open(encoding="utf-8") as fh:
                self.entries = [json.loads(line) for line in fh if line.strip()]
        self._by_key: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        for e in self.entries:
            self._by_key[e["fingerprint"]["key"]].append(e)

    def append(
        self, fp: dict[str, str], response: AIMessage, messages: Sequence[BaseMessage]
    ) -> None:
        entry = {
            "fingerprint": fp,
            "last_message": _norm_message(messages[-1]) if messages else None,
            "response": message_to_dict(response),
        }
        with self._lock:
            self.entries.append(entry)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, default=str) + "\n")

    def take(self, fp: dict[str, str], messages: Sequence[BaseMessage]) -> AIMessage:
        with self._lock:
            queue = self._by_key.get(fp["key"])
            if queue:
                entry = queue.popleft() if len(queue) > 1 else queue[0]
                return messages_from_dict([entry["response"]])[0]  # type: ignore[return-value]
        same_tools = any(e["fingerprint"]["tools"] == fp["tools"] for e in self.entries)
        same_prompt = any(e["fingerprint"]["prompt"] == fp["prompt"] for e in self.entries)
        if same_prompt and not same_tools:
            what = "a tool schema changed since the recording"
        elif same_tools:
            what = "the prompt changed since the recording"
        else:
            what = "both the prompt and the tool schemas differ from the recording"
        last = _norm_message(messages[-1]) if messages else {}
        raise ReplayDriftError(
            f"Replay drift in {self.path.name}: {what} (no recorded call matches; last message "
            f"{last.get('type')}: {str(last.get('content'))[:80]!r}). Re-record with --record."
        )


class _CassetteModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    cassette: Any
    tool_schemas: list[dict[str, Any]] = Field(default_factory=list)
    model_name: str = "replay"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        schemas = [convert_to_openai_tool(t) for t in tools]
        return self.model_copy(
            update={"tool_schemas": schemas, **self._bind_extra(tools, tool_choice, kwargs)}
        )

    def _bind_extra(
        self, tools: Sequence[Any], tool_choice: Any, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        return {}

    def _result(self, message: AIMessage) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=message)])


class ReplayChatModel(_CassetteModel):
    """Answers from a cassette; never touches a network."""

    @property
    def _llm_type(self) -> str:
        return "replay"

    @classmethod
    def from_path(cls, path: str | Path) -> ReplayChatModel:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"No cassette at {path}: record one with `--record` first.")
        return cls(cassette=Cassette(path))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        fp = fingerprint(messages, self.tool_schemas)
        return self._result(self.cassette.take(fp, messages))


class RecordingChatModel(_CassetteModel):
    """Calls the real ``inner`` model and appends each call to the cassette."""

    inner: Any = None
    bound_inner: Any = None

    @property
    def _llm_type(self) -> str:
        return "recording"

    @classmethod
    def wrap(cls, inner: BaseChatModel, path: str | Path) -> RecordingChatModel:
        return cls(
            cassette=Cassette(Path(path)),
            inner=inner,
            model_name=getattr(inner, "model_name", "recorded"),
        )

    def _bind_extra(
        self, tools: Sequence[Any], tool_choice: Any, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        return {"bound_inner": self.inner.bind_tools(tools, tool_choice=tool_choice, **kwargs)}

    # The inner call must not report to the run's callbacks: the recording model's own call
    # already counts, so the usage would double and a replay would disagree with its
    # recording. LangChain hands a parent's callbacks to nested calls through a context
    # variable (a ``RunnableBinding`` merges them back even with ``callbacks=[]``), so the
    # inner call runs with that variable cleared.
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        token = var_child_runnable_config.set(None)
        try:
            response = (self.bound_inner or self.inner).invoke(messages, {"callbacks": []})
        finally:
            var_child_runnable_config.reset(token)
        self.cassette.append(fingerprint(messages, self.tool_schemas), response, messages)
        return self._result(response)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        token = var_child_runnable_config.set(None)
        try:
            response = await (self.bound_inner or self.inner).ainvoke(messages, {"callbacks": []})
        finally:
            var_child_runnable_config.reset(token)
        self.cassette.append(fingerprint(messages, self.tool_schemas), response, messages)
        return self._result(response)
