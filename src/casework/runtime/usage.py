"""Usage accounting: tokens, model calls, tool calls, wall time and cost, per run and per node."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult

__all__ = ["PRICES", "NodeUsage", "Usage", "UsageCallback", "price_for"]

# USD per million tokens (input, output). Only models whose list price we know; local and
# scripted models cost nothing. Users extend this table in code or ignore cost.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "qwen2.5-coder-1.5b": (0.0, 0.0),
    "scripted": (0.0, 0.0),
    "replay": (0.0, 0.0),
}


def price_for(model_name: str | None) -> tuple[float, float] | None:
    """Longest table key that prefixes the model name (dated snapshots share a price)."""
    if not model_name:
        return None
    name = model_name.split(":", 1)[-1].split("/")[-1].lower()
    best = max((k for k in PRICES if name.startswith(k)), key=len, default=None)
    return PRICES[best] if best else None


@dataclass
class NodeUsage:
    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    cost_usd: float = 0.0


@dataclass
class Usage:
    """Totals for one run. ``cost_usd`` is None when a model's price is unknown."""

    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wall_seconds: float = 0.0
    cost_usd: float | None = 0.0
    by_node: dict[str, NodeUsage] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["total_tokens"] = self.total_tokens
        return data

    def add(self, other: Usage) -> None:
        """Fold another run's usage into this one (sub-agents, eval totals)."""
        self.model_calls += other.model_calls
        self.tool_calls += other.tool_calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.wall_seconds += other.wall_seconds
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd
        for key, node in other.by_node.items():
            mine = self.by_node.setdefault(key, NodeUsage())
            for f in ("model_calls", "tool_calls", "input_tokens", "output_tokens"):
                setattr(mine, f, getattr(mine, f) + getattr(node, f))
            mine.seconds += node.seconds
            mine.cost_usd += node.cost_usd


class UsageCallback(BaseCallbackHandler):
    """Collects usage from LangChain callbacks; thread-safe, one instance per run."""

    raise_error = False
    # Counting is cheap and lock-guarded: run it inline rather than hop to a thread per
    # event in async runs (measured: eval throughput 1.24x -> 1.14x of ideal).
    run_inline = True
    # Only model and tool events count; skipping the rest saves a dispatch per graph node.
    ignore_chain = True
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self) -> None:
        self.usage = Usage()
        self._lock = threading.Lock()
        self._started: dict[UUID, tuple[float, str]] = {}
        self._prices: dict[str | None, tuple[float, float] | None] = {}

    @staticmethod
    def _node(metadata: dict[str, Any] | None) -> str:
        metadata = metadata or {}
        node = metadata.get("langgraph_node", "run")
        agent = metadata.get("lc_agent_name")
        return f"{agent}/{node}" if agent else str(node)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kw: Any,
    ) -> None:
        with self._lock:
            self._started[run_id] = (time.perf_counter(), self._node(metadata))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kw: Any) -> None:
        with self._lock:
            started, node = self._started.pop(run_id, (time.perf_counter(), "run"))
            elapsed = time.perf_counter() - started
            n_in = n_out = 0
            model_name = None
            for gens in response.generations:
                for gen in gens:
                    msg = getattr(gen, "message", None)
                    meta = getattr(msg, "usage_metadata", None) or {}
                    n_in += int(meta.get("input_tokens", 0) or 0)
                    n_out += int(meta.get("output_tokens", 0) or 0)
                    rmeta = getattr(msg, "response_metadata", None) or {}
                    model_name = model_name or rmeta.get("model_name") or rmeta.get("model")
            u = self.usage
            u.model_calls += 1
            u.input_tokens += n_in
            u.output_tokens += n_out
            nu = u.by_node.setdefault(node, NodeUsage())
            nu.model_calls += 1
            nu.input_tokens += n_in
            nu.output_tokens += n_out
            nu.seconds += elapsed
            if model_name not in self._prices:  # one lookup per model and run
                self._prices[model_name] = price_for(model_name)
            price = self._prices[model_name]
            if price is None:
                u.cost_usd = None
            else:
                cost = (n_in * price[0] + n_out * price[1]) / 1_000_000
                nu.cost_usd += cost
                if u.cost_usd is not None:
                    u.cost_usd += cost

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kw: Any,
    ) -> None:
        with self._lock:
            self._started[run_id] = (time.perf_counter(), self._node(metadata))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        self._tool_done(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self._tool_done(run_id)

    def _tool_done(self, run_id: UUID) -> None:
        with self._lock:
            started, node = self._started.pop(run_id, (time.perf_counter(), "tools"))
            self.usage.tool_calls += 1
            nu = self.usage.by_node.setdefault(node, NodeUsage())
            nu.tool_calls += 1
            nu.seconds += time.perf_counter() - started
