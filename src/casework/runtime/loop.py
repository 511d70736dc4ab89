"""casework's ReAct graph, built on LangGraph directly instead of ``create_agent``.

The graph has ``create_agent``'s shape and its middleware semantics (the same node names, the
same before/after hook nodes and jump edges, the same ``wrap_model_call`` / ``wrap_tool_call``
chains: they are composed with ``langchain.agents.factory``'s own helpers), so any
``AgentMiddleware`` an app passes behaves as it does there. What it leaves out is per-step
work the agent factory does whatever the run needs (``casework bench runtime`` measures it):

* the model is bound to its tools once, not before every call (a middleware that overrides
  the model, tools or settings of a request still gets a fresh binding);
* malformed tool calls get their error answers before the next model call, as there, but
  only the last turn is looked at instead of the whole history before every call (a history
  given as input with an unanswered malformed call in an earlier turn is not patched);
* the tool node runs the model's tool calls as one task reading the state, as bare LangGraph
  does, and takes one ``Send`` only when some calls were already answered (by an approval's
  rejection or a tool cap);
* hooks named in ``untraced`` (casework's own, which run on every step) skip LangSmith's
  per-call span wrapper while tracing is off; every other middleware keeps its spans.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.factory import (
    _build_commands,
    _chain_async_model_call_handlers,
    _chain_async_tool_call_wrappers,
    _chain_model_call_handlers,
    _chain_tool_call_wrappers,
    _fetch_last_ai_and_tool_messages,
    _get_can_jump_to,
    _patch_invalid_tool_calls,
    _resolve_jump,
    _resolve_schemas,
    _wrap_trace_kwargs,
)
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware._trace_policy import _node_trace_policy
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph._internal._runnable import RunnableCallable
from langgraph.constants import END, START
from langgraph.graph.state import CompiledStateGraph, StateGraph
from langgraph.prebuilt.tool_node import ToolNode
from langgraph.types import Command, Send
from langsmith import traceable
from langsmith.utils import tracing_is_enabled

__all__ = ["build_react_graph", "model_request"]

_HOOKS = ("before_agent", "before_model", "after_model", "after_agent")


def _overrides(mw: AgentMiddleware[Any, Any], hook: str) -> bool:
    return getattr(type(mw), hook) is not getattr(AgentMiddleware, hook)


def _has(mw: AgentMiddleware[Any, Any], hook: str) -> bool:
    """Whether the middleware has ``hook`` in its sync or async form (as ``create_agent`` reads)."""
    return _overrides(mw, hook) or _overrides(mw, f"a{hook}")


def model_request(**fields: Any) -> ModelRequest[Any]:
    """A ``ModelRequest`` without its constructor's nine deprecated attribute sets (each one
    a ``warnings.warn`` under ``catch_warnings``, ~50 us per model call); ``override`` and
    every other method work on it as on one built the usual way."""
    request: ModelRequest[Any] = object.__new__(ModelRequest)
    for name, value in fields.items():
        object.__setattr__(request, name, value)
    return request


def _last_turn_malformed(messages: Sequence[BaseMessage]) -> bool:
    """Whether the model's last turn has a malformed tool call (read from the end: every
    earlier turn was answered when it was the last, and the answers are in the state)."""
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            return bool(m.invalid_tool_calls)
    return False


def _middleware_hooks(
    middleware: Sequence[AgentMiddleware[Any, Any]], untraced: Collection[str]
) -> Callable[[str, str], list[Callable[..., Any]]]:
    """``hooks(kind, hook)``: each middleware's ``kind`` (``hook`` or its async twin), in
    middleware order, in a LangSmith span unless it is ``untraced`` and tracing is off."""
    trace_all = tracing_is_enabled()

    def hooks(kind: str, hook: str) -> list[Callable[..., Any]]:
        return [
            getattr(m, kind)
            if m.name in untraced and not trace_all
            else traceable(name=f"{m.name}.{kind}", **_wrap_trace_kwargs(m))(getattr(m, kind))
            for m in middleware
            if _has(m, hook)
        ]

    return hooks


def _model_callers(
    model: BaseChatModel, default_tools: list[Any], name: str
) -> tuple[
    Callable[[ModelRequest[Any]], ModelResponse[Any]],
    Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
]:
    """(execute, aexecute): one model call of a request, sync and async."""
    # Bound at the first call, not here: an agent built only to read a thread's checkpoint
    # (an approval resumed after a restart) may have no model at all.
    bound: list[Any] = []

    def bound_model(request: ModelRequest[Any]) -> Any:
        if (
            request.model is model
            and request.tools is default_tools
            and request.tool_choice is None
            and not request.model_settings
        ):
            if not bound:
                bound.append(model.bind_tools(default_tools, tool_choice=None))
            return bound[0]
        if request.tools:
            return request.model.bind_tools(
                request.tools, tool_choice=request.tool_choice, **request.model_settings
            )
        return request.model.bind(**request.model_settings)

    def prompt(request: ModelRequest[Any]) -> list[BaseMessage]:
        if request.system_message is None:
            return list(request.messages)
        return [request.system_message, *request.messages]

    def finish(output: AIMessage) -> ModelResponse[Any]:
        output.name = name
        return ModelResponse(result=[output], structured_response=None)

    def execute(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return finish(bound_model(request).invoke(prompt(request)))

    async def aexecute(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return finish(await bound_model(request).ainvoke(prompt(request)))

    return execute, aexecute


def _model_node(
    model: BaseChatModel,
    default_tools: list[Any],
    system_prompt: str,
    hooks: Callable[[str, str], list[Callable[..., Any]]],
    name: str,
) -> RunnableCallable:
    """The model node: the request (its malformed last turn repaired), through the
    middleware's ``wrap_model_call`` chain, to the model."""
    execute, aexecute = _model_callers(model, default_tools, name)
    wrap_model = _chain_model_call_handlers(hooks("wrap_model_call", "wrap_model_call"))
    awrap_model = _chain_async_model_call_handlers(hooks("awrap_model_call", "wrap_model_call"))
    system_message = SystemMessage(system_prompt)

    def request_and_repair(state: Any, runtime: Any) -> tuple[ModelRequest[Any], Any]:
        """The request, and the repaired history when the last turn has malformed calls."""
        messages = state["messages"]
        repaired = None
        if _last_turn_malformed(messages):
            patched = _patch_invalid_tool_calls(messages)
            messages, repaired = patched, (patched if patched != messages else None)
        request = model_request(
            model=model,
            messages=messages,
            system_message=system_message,
            tool_choice=None,
            tools=default_tools,
            response_format=None,
            state=state,
            runtime=runtime,
            model_settings={},
        )
        return request, repaired

    def model_node(state: Any, runtime: Any) -> list[Command[Any]]:
        request, repaired = request_and_repair(state, runtime)
        if wrap_model is None:
            return _build_commands(execute(request), repaired_messages=repaired)
        result = wrap_model(request, execute)
        return _build_commands(result.model_response, result.commands, repaired_messages=repaired)

    async def amodel_node(state: Any, runtime: Any) -> list[Command[Any]]:
        request, repaired = request_and_repair(state, runtime)
        if awrap_model is None:
            return _build_commands(await aexecute(request), repaired_messages=repaired)
        result = await awrap_model(request, aexecute)
        return _build_commands(result.model_response, result.commands, repaired_messages=repaired)

    return RunnableCallable(model_node, amodel_node, trace=False)


def _node(m: AgentMiddleware[Any, Any], kind: str) -> str:
    return f"{m.name}.{kind}"


@dataclass(frozen=True)
class _Ends:
    """Where the loop starts (the first ``before_model`` or the model), leaves the model (the
    last ``after_model`` or the model), and where the run exits."""

    loop_entry: str
    loop_exit: str
    exit_node: str


def _add_loop_edges(
    graph: StateGraph[Any, Any, Any, Any], tool_node: ToolNode, ends: _Ends
) -> None:
    """Model -> tools (the pending calls) -> model, or out when no call is left or every tool
    that ran returns directly."""
    loop_entry, exit_node = ends.loop_entry, ends.exit_node

    def model_to_tools(state: dict[str, Any]) -> str | list[Send] | None:
        if jump := state.get("jump_to"):
            return _resolve_jump(jump, model_destination=loop_entry, end_destination=exit_node)
        ai, answered = _fetch_last_ai_and_tool_messages(state["messages"])
        if ai is None or not ai.tool_calls:
            return exit_node
        if not answered:
            return "tools"  # every call is pending: the tool node reads them from the state
        ids = {m.tool_call_id for m in answered}
        pending = [c for c in ai.tool_calls if c["id"] not in ids]
        if pending:
            return [Send("tools", pending)]
        return loop_entry  # every call has an answer (rejected, capped): back to the model

    def tools_to_model(state: dict[str, Any]) -> str:
        ai, results = _fetch_last_ai_and_tool_messages(state["messages"])
        if ai is None:
            return loop_entry
        by_id = {t.tool_call_id: t.name for t in results if t.name in tool_node.tools_by_name}
        ran = [
            n
            for c in ai.tool_calls
            if (n := by_id.get(c["id"] or "", c["name"])) in tool_node.tools_by_name
        ]
        if ran and all(tool_node.tools_by_name[n].return_direct for n in ran):
            return exit_node
        return loop_entry

    direct = any(t.return_direct for t in tool_node.tools_by_name.values())
    graph.add_conditional_edges(
        "tools",
        RunnableCallable(tools_to_model, trace=False),
        [loop_entry, exit_node] if direct else [loop_entry],
    )
    graph.add_conditional_edges(
        ends.loop_exit,
        RunnableCallable(model_to_tools, trace=False),
        ["tools", exit_node, loop_entry],
    )


def _add_hook_edges(
    graph: StateGraph[Any, Any, Any, Any],
    with_hook: dict[str, list[AgentMiddleware[Any, Any]]],
    ends: _Ends,
) -> None:
    """Each hook to the next of its kind, the last to the loop; a hook that may jump gets a
    conditional edge to where it may go."""
    loop_entry, exit_node = ends.loop_entry, ends.exit_node

    def jump_edge(name: str, m: AgentMiddleware[Any, Any], kind: str, default: str) -> None:
        can_jump_to = _get_can_jump_to(m, kind)
        if not can_jump_to:
            graph.add_edge(name, default)
            return

        def edge(state: dict[str, Any]) -> str:
            jump = _resolve_jump(
                state.get("jump_to"), model_destination=loop_entry, end_destination=exit_node
            )
            return jump or default

        destinations = [default]
        if "end" in can_jump_to:
            destinations.append(exit_node)
        if "tools" in can_jump_to:
            destinations.append("tools")
        if "model" in can_jump_to and name != loop_entry:
            destinations.append(loop_entry)
        graph.add_conditional_edges(name, RunnableCallable(edge, trace=False), destinations)

    before_agent, before_model = with_hook["before_agent"], with_hook["before_model"]
    after_model, after_agent = with_hook["after_model"], with_hook["after_agent"]
    for m1, m2 in itertools.pairwise(before_agent):
        jump_edge(_node(m1, "before_agent"), m1, "before_agent", _node(m2, "before_agent"))
    if before_agent:
        m = before_agent[-1]
        jump_edge(_node(m, "before_agent"), m, "before_agent", loop_entry)
    for m1, m2 in itertools.pairwise(before_model):
        jump_edge(_node(m1, "before_model"), m1, "before_model", _node(m2, "before_model"))
    if before_model:
        m = before_model[-1]
        jump_edge(_node(m, "before_model"), m, "before_model", "model")
    if after_model:
        graph.add_edge("model", _node(after_model[-1], "after_model"))
        for m1, m2 in itertools.pairwise(reversed(after_model)):
            jump_edge(_node(m1, "after_model"), m1, "after_model", _node(m2, "after_model"))
    for m1, m2 in itertools.pairwise(reversed(after_agent)):
        jump_edge(_node(m1, "after_agent"), m1, "after_agent", _node(m2, "after_agent"))
    if after_agent:
        m = after_agent[0]
        jump_edge(_node(m, "after_agent"), m, "after_agent", END)


def build_react_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any]],
    *,
    system_prompt: str,
    middleware: Sequence[AgentMiddleware[Any, Any]],
    untraced: Collection[str] = (),
    context_schema: type | None = None,
    checkpointer: Any = None,
    name: str = "agent",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The compiled ReAct graph: ``create_agent(model, tools, system_prompt=..., middleware=...,
    context_schema=..., checkpointer=..., name=...)`` without its per-step extras (see the
    module's docstring). ``untraced``: names of middleware whose ``wrap_*`` hooks are not
    wrapped in LangSmith spans while tracing is off."""
    if len({m.name for m in middleware}) != len(middleware):
        raise ValueError("Two middleware share a name; give each instance its own name.")
    hooks = _middleware_hooks(middleware, untraced)
    tool_node = ToolNode(
        tools=[*(t for m in middleware for t in getattr(m, "tools", ())), *tools],
        wrap_tool_call=_chain_tool_call_wrappers(hooks("wrap_tool_call", "wrap_tool_call")),
        awrap_tool_call=_chain_async_tool_call_wrappers(hooks("awrap_tool_call", "wrap_tool_call")),
    )
    default_tools: list[Any] = list(tool_node.tools_by_name.values())
    schema, input_schema, output_schema = _resolve_schemas(
        [*(m.state_schema for m in middleware), AgentState]
    )
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(
        state_schema=schema,
        input_schema=input_schema,
        output_schema=output_schema,
        context_schema=context_schema,
    )
    graph.add_node("model", _model_node(model, default_tools, system_prompt, hooks, name))
    graph.add_node("tools", tool_node)
    with_hook = {kind: [m for m in middleware if _has(m, kind)] for kind in _HOOKS}
    for m in middleware:
        for kind in _HOOKS:
            if m in with_hook[kind]:
                sync = getattr(m, kind) if _overrides(m, kind) else None
                async_ = getattr(m, f"a{kind}") if _overrides(m, f"a{kind}") else None
                graph.add_node(
                    _node(m, kind),
                    RunnableCallable(sync, async_, trace=False),
                    input_schema=schema,
                    trace_policy=_node_trace_policy(m.trace_policy),
                )
    before_agent, before_model = with_hook["before_agent"], with_hook["before_model"]
    after_model, after_agent = with_hook["after_model"], with_hook["after_agent"]
    ends = _Ends(
        loop_entry=_node(before_model[0], "before_model") if before_model else "model",
        loop_exit=_node(after_model[0], "after_model") if after_model else "model",
        exit_node=_node(after_agent[-1], "after_agent") if after_agent else END,
    )
    graph.add_edge(
        START, _node(before_agent[0], "before_agent") if before_agent else ends.loop_entry
    )
    _add_loop_edges(graph, tool_node, ends)
    _add_hook_edges(graph, with_hook, ends)
    metadata = {"ls_integration": "langchain_create_agent", "lc_agent_name": name}
    compiled = graph.compile(checkpointer=checkpointer, name=name)
    return compiled.with_config({"recursion_limit": 9_999, "metadata": metadata})
