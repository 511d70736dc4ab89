"""casework's own ReAct graph (``runtime.loop``) composes middleware as ``create_agent`` does:
the hook order, jumps, interrupts with resume, malformed tool calls, partly answered turns,
and a rebinding only when a request changes what the model is bound to."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain.agents.middleware.types import hook_config
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from casework.llm.scripted import ScriptedChatModel, call, say
from casework.runtime.loop import build_react_graph, model_request


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(return_direct=True)
def finish(note: str) -> str:
    """Finish with a note."""
    return f"done: {note}"


class Recorder(AgentMiddleware):
    """Writes every hook it runs into a shared log."""

    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__()
        self._name, self.log = name, log

    @property
    def name(self) -> str:
        return self._name

    def before_agent(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.name}.before_agent")

    def before_model(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.name}.before_model")

    def after_model(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.name}.after_model")

    def after_agent(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.name}.after_agent")

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.log.append(f"{self.name}.model>")
        response = handler(request)
        self.log.append(f"<{self.name}.model")
        return response

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.log.append(f"{self.name}.tool>")
        result = handler(request)
        self.log.append(f"<{self.name}.tool")
        return result


def _graph(model: Any, middleware: list[Any], **kw: Any) -> Any:
    return build_react_graph(
        model, [lookup, finish], system_prompt="sys", middleware=middleware, **kw
    )


def _hook_log(build: Callable[..., Any]) -> list[str]:
    log: list[str] = []
    model = ScriptedChatModel(steps=[call("lookup", key="a"), say("done")])
    graph = build(model, [Recorder("outer", log), Recorder("inner", log)])
    graph.invoke({"messages": [HumanMessage("go")]})
    return log


def test_hooks_run_in_create_agents_order() -> None:
    def factory(model: Any, mw: list[Any]) -> Any:
        return create_agent(model, tools=[lookup, finish], system_prompt="sys", middleware=mw)

    turn = [
        "outer.before_model",
        "inner.before_model",
        "outer.model>",
        "inner.model>",
        "<inner.model",
        "<outer.model",
        "inner.after_model",
        "outer.after_model",
    ]
    expected = [
        "outer.before_agent",
        "inner.before_agent",
        *turn,
        "outer.tool>",
        "inner.tool>",
        "<inner.tool",
        "<outer.tool",
        *turn,
        "inner.after_agent",
        "outer.after_agent",
    ]
    assert _hook_log(_graph) == expected
    assert _hook_log(factory) == expected


class JumpBack(AgentMiddleware):
    """After the first text-only turn, sends the model back once with a note."""

    @hook_config(can_jump_to=["model", "end"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and not last.tool_calls:
            if any(isinstance(m, HumanMessage) and m.content == "again" for m in state["messages"]):
                return {"jump_to": "end"}
            return {"messages": [HumanMessage("again")], "jump_to": "model"}
        return None


def test_after_model_jumps_back_to_the_model_and_to_the_end() -> None:
    model = ScriptedChatModel(steps=[say("first"), say("second")])
    out = _graph(model, [JumpBack()]).invoke({"messages": [HumanMessage("go")]})
    assert [m.content for m in out["messages"]] == ["go", "first", "again", "second"]
    model.assert_exhausted()


def test_return_direct_tool_ends_the_run_after_it_ran() -> None:
    model = ScriptedChatModel(steps=[call("finish", note="n")])
    out = _graph(model, []).invoke({"messages": [HumanMessage("go")]})
    assert out["messages"][-1].content == "done: n"
    assert model.calls == 1


def test_a_malformed_tool_call_is_answered_before_the_next_model_call() -> None:
    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "name": "lookup",
                "args": "{key:",
                "id": "bad1",
                "error": None,
                "type": "invalid_tool_call",
            }
        ],
    )
    seen: list[list[BaseMessage]] = []

    def respond(messages: list[BaseMessage]) -> AIMessage:
        seen.append(messages)
        return say("gave up")

    model = ScriptedChatModel(steps=[call("lookup", key="a"), broken, respond])
    out = _graph(model, [JumpBack()]).invoke({"messages": [HumanMessage("go")]})
    answer = next(
        m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "bad1"
    )
    assert answer.status == "error"
    assert answer.content == (
        "Tool call lookup with id bad1 could not be executed - arguments were malformed or "
        "truncated."
    )
    # the answer sits right after the malformed turn, and the model read it on its next call
    i = out["messages"].index(answer)
    assert out["messages"][i - 1].invalid_tool_calls[0]["id"] == "bad1"
    assert answer in seen[0]


class AnswerFirstCall(AgentMiddleware):
    """Answers a turn's first tool call itself (as a rejection would), leaving the rest."""

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and len(last.tool_calls) > 1:
            first = last.tool_calls[0]
            return {
                "messages": [ToolMessage("refused", tool_call_id=first["id"], name=first["name"])]
            }
        return None


def test_only_the_unanswered_calls_of_a_turn_run() -> None:
    two = AIMessage(
        content="",
        tool_calls=[
            {"name": "lookup", "args": {"key": "a"}, "id": "c1", "type": "tool_call"},
            {"name": "lookup", "args": {"key": "b"}, "id": "c2", "type": "tool_call"},
        ],
    )
    model = ScriptedChatModel(steps=[two, say("ok")])
    out = _graph(model, [AnswerFirstCall()]).invoke({"messages": [HumanMessage("go")]})
    results = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results == {"c1": "refused", "c2": "value of b"}


def test_an_approval_interrupts_and_resumes_on_the_same_thread() -> None:
    model = ScriptedChatModel(steps=[call("lookup", key="a"), say("done")])
    graph = _graph(
        model,
        [HumanInTheLoopMiddleware(interrupt_on={"lookup": True})],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    first = graph.invoke({"messages": [HumanMessage("go")]}, config)
    [pending] = first["__interrupt__"]
    assert pending.value["action_requests"][0]["args"] == {"key": "a"}
    assert model.calls == 1
    out = graph.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert out["messages"][2].content == "value of a"
    model.assert_exhausted()  # the model was not called again for the interrupted turn


class ForceLookup(AgentMiddleware):
    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request.override(tool_choice="lookup"))


def test_the_model_is_bound_once_unless_a_request_changes_the_binding(monkeypatch) -> None:
    binds: list[Any] = []
    real = ScriptedChatModel.bind_tools

    def spy(self: Any, tools: Any, *, tool_choice: Any = None, **kw: Any) -> Any:
        binds.append(tool_choice)
        return real(self, tools, tool_choice=tool_choice, **kw)

    monkeypatch.setattr(ScriptedChatModel, "bind_tools", spy)
    steps = [call("lookup", key="a"), call("lookup", key="b"), say("done")]
    _graph(ScriptedChatModel(steps=steps), []).invoke({"messages": [HumanMessage("go")]})
    assert binds == [None]
    binds.clear()
    _graph(ScriptedChatModel(steps=steps), [ForceLookup()]).invoke(
        {"messages": [HumanMessage("go")]}
    )
    assert binds == ["lookup", "lookup", "lookup"]


def test_a_request_built_without_its_constructor_behaves_like_one() -> None:
    model = ScriptedChatModel()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        request = model_request(
            model=model,
            messages=[HumanMessage("go")],
            system_message=None,
            tool_choice=None,
            tools=[],
            response_format=None,
            state={"messages": []},
            runtime=None,
            model_settings={},
        )
    changed = request.override(tool_choice="lookup")
    assert (changed.tool_choice, changed.messages, changed.model) == (
        "lookup",
        request.messages,
        model,
    )
    assert request.tool_choice is None


def test_two_middleware_with_one_name_are_refused() -> None:
    log: list[str] = []
    with pytest.raises(ValueError, match="share a name"):
        _graph(ScriptedChatModel(), [Recorder("same", log), Recorder("same", log)])


class AsyncRecorder(Recorder):
    """The same log from the async hooks."""

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.log.append(f"{self.name}.amodel>")
        response = await handler(request)
        self.log.append(f"<{self.name}.amodel")
        return response

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.log.append(f"{self.name}.atool>")
        result = await handler(request)
        self.log.append(f"<{self.name}.atool")
        return result


def test_the_async_run_composes_the_async_hooks_in_the_same_order() -> None:
    log: list[str] = []
    model = ScriptedChatModel(steps=[call("lookup", key="a"), say("done")])
    graph = _graph(model, [AsyncRecorder("outer", log), AsyncRecorder("inner", log)])
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage("go")]}))
    assert out["messages"][2].content == "value of a"
    wraps = [e for e in log if e.endswith(">") or e.startswith("<")]
    assert wraps == [
        "outer.amodel>",
        "inner.amodel>",
        "<inner.amodel",
        "<outer.amodel",
        "outer.atool>",
        "inner.atool>",
        "<inner.atool",
        "<outer.atool",
        "outer.amodel>",
        "inner.amodel>",
        "<inner.amodel",
        "<outer.amodel",
    ]
