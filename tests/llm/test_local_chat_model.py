"""The local chat model: output schema, prompt rendering, parsing, and (slow) the real GGUF."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from pydantic import BaseModel, Field

from casework.errors import ConfigError, ModelError
from casework.llm import local
from casework.llm.local import (
    FINAL_ANSWER,
    LocalChatModel,
    ToolSpec,
    build_output_schema,
    load_local_model,
    parse_output,
    render_prompt,
    sanitize_schema,
    to_tool_specs,
)


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny and 21 C in {city}."


@tool
def get_time(timezone: str) -> str:
    """Current local time in an IANA timezone such as Europe/Paris."""
    return "14:05"


TOOLS = [get_weather, get_time]


def _walk(node: Any):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


# ------------------------------------------------------------------------ schema (fast)


class Address(BaseModel):
    street: str
    tags: list[str] = Field(default_factory=list)


class Node(BaseModel):
    name: str
    children: list[Node] = Field(default_factory=list)


def test_sanitize_bounds_strings_arrays_and_objects() -> None:
    schema = {
        "type": "object",
        "title": "Args",
        "properties": {
            "note": {"type": "string", "description": "free text", "title": "Note"},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "when": {"type": "string", "format": "date"},
            "email": {"type": "string", "format": "email"},
            "code": {"type": "string", "pattern": "^(?=x)x+$"},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "choice": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "items": {"type": "array", "items": {"type": "string"}},
            "anything": {},
            "not_this": {"not": {"type": "null"}},
            "meta": {"type": "object"},
        },
        "required": ["note", "ghost"],
    }
    out = sanitize_schema(schema, max_string_length=50, max_items=5)
    props = out["properties"]
    assert out["additionalProperties"] is False and out["required"] == ["note"]
    assert "title" not in json.dumps(out) and "description" not in json.dumps(out)
    assert props["note"] == {"type": "string", "maxLength": 50}
    assert props["kind"] == {"type": "string", "enum": ["a", "b"]}
    assert props["when"] == {"type": "string", "format": "date"}
    assert props["email"] == {"type": "string", "maxLength": 50}  # format dropped, bounded
    assert "pattern" not in props["code"]  # lookaround dropped
    assert props["maybe"]["anyOf"][0] == {"type": "string", "maxLength": 50}
    assert "oneOf" not in props["choice"] and len(props["choice"]["anyOf"]) == 2
    assert props["items"]["maxItems"] == 5 and props["items"]["items"]["maxLength"] == 50
    assert props["anything"]["maxLength"] == 50 and "object" not in props["anything"]["type"]
    assert "not" not in props["not_this"]
    assert props["meta"]["maxProperties"] == 5


def test_every_free_string_in_union_has_max_length() -> None:
    class Args(BaseModel):
        address: Address
        notes: list[str]
        tree: Node

    specs = to_tool_specs([get_weather, Args])
    schema = build_output_schema(specs, max_string_length=77)
    for node in _walk(schema):
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        if "string" in types and not ({"enum", "const", "format"} & node.keys()):
            assert node.get("maxLength") == 77, node
        assert "$ref" not in node and "$defs" not in node
    assert json.dumps(schema)  # recursion was cut, schema is finite


def test_union_follows_tool_choice() -> None:
    specs = to_tool_specs(TOOLS)

    def names(choice: Any) -> list[str]:
        schema = build_output_schema(specs, choice)
        return [b["properties"]["tool"]["const"] for b in schema["anyOf"]]

    assert names(None) == ["get_weather", "get_time", FINAL_ANSWER]
    assert names("auto") == ["get_weather", "get_time", FINAL_ANSWER]
    assert names("any") == ["get_weather", "get_time"]
    assert names("required") == ["get_weather", "get_time"]
    assert names("get_time") == ["get_time"]
    assert names({"type": "function", "function": {"name": "get_weather"}}) == ["get_weather"]
    assert names("none") == [FINAL_ANSWER]
    with pytest.raises(ConfigError, match="names no bound tool"):
        build_output_schema(specs, "nope")
    schema = build_output_schema(specs)
    assert schema["x-guidance"]["whitespace_flexible"] is False
    branch = schema["anyOf"][0]
    assert branch["required"] == ["tool", "arguments"]
    assert branch["properties"]["arguments"]["required"] == ["city"]


def test_reserved_and_duplicate_tool_names() -> None:
    with pytest.raises(ConfigError, match="reserved"):
        to_tool_specs([{"type": "function", "function": {"name": FINAL_ANSWER}}])
    with pytest.raises(ConfigError, match="unique"):
        to_tool_specs([get_weather, get_weather])


# ------------------------------------------------------------------------ rendering (fast)


def test_render_chatml_with_tools_results_and_odd_content() -> None:
    specs = to_tool_specs(TOOLS)
    call = {"name": "get_weather", "args": {"city": "Lyon"}, "id": "call_1", "type": "tool_call"}
    messages = [
        SystemMessage("You are terse."),
        SystemMessage([{"type": "text", "text": "Cite tools."}]),
        HumanMessage([{"type": "text", "text": "Weather in"}, "Lyon?", {"type": "image_url"}]),
        # content=None as some providers send it (the constructor would reject it)
        AIMessage.model_construct(content=None, tool_calls=[call], additional_kwargs={}),
        ToolMessage("x" * 50, tool_call_id="call_1"),  # name found through the call id
        SystemMessage("Be brief now."),
        AIMessage(content=""),
    ]
    prompt = render_prompt(messages, specs, max_tool_result_chars=20)
    assert prompt.startswith("<|im_start|>system\nYou are terse.\n\nCite tools.\n\n# Tools")
    assert prompt.endswith("<|im_start|>assistant\n")
    assert prompt.count("<|im_start|>system") == 2  # later system message stays in place
    assert '{"name": "get_weather", "description": "Current weather for a city."' in prompt
    assert '"final_answer"' in prompt
    assert "<|im_start|>user\nWeather in\nLyon?\n[image_url omitted]<|im_end|>" in prompt
    assert '<|im_start|>assistant\n{"tool": "get_weather", "arguments": {"city": "Lyon"}}' in prompt
    assert "Result of get_weather: " + "x" * 20 + "\n… [truncated 30 characters]" in prompt
    assert '{"tool": "final_answer", "arguments": {"text": ""}}' in prompt
    assert prompt.count("<|im_start|>") == prompt.count("<|im_end|>") + 1


def test_forced_tool_choice_changes_instructions() -> None:
    specs = to_tool_specs(TOOLS)
    forced = render_prompt([HumanMessage("hi")], specs, "any")
    assert "You must call one of the tools" in forced and "final_answer" not in forced
    one = render_prompt([HumanMessage("hi")], specs, "get_time")
    assert 'You must call the tool "get_time"' in one


def test_render_without_tools_is_plain_chat() -> None:
    prompt = render_prompt([HumanMessage("hi"), AIMessage("hello"), HumanMessage("bye")])
    assert prompt == (
        f"<|im_start|>system\n{local.DEFAULT_SYSTEM}<|im_end|>\n"
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n"
        "<|im_start|>user\nbye<|im_end|>\n<|im_start|>assistant\n"
    )


def test_next_prompt_extends_previous_prompt_plus_output() -> None:
    specs = to_tool_specs(TOOLS)
    history = [SystemMessage("sys"), HumanMessage("Weather in Lyon, and time in Paris?")]
    first = render_prompt(history, specs)
    # The model's exact bytes (a number spelled 12.50) are reused, not re-serialised.
    raw = '{"tool": "get_weather", "arguments": {"city": "Lyon", "n": 12.50}}'
    spec = ToolSpec("get_weather", "", {"type": "object", "properties": {}})
    reply = parse_output(raw, [spec, specs[1]])
    call = reply.tool_calls[0]
    history += [reply, ToolMessage("Sunny", tool_call_id=call["id"], name=call["name"])]
    second = render_prompt(history, specs)
    assert second.startswith(first + raw + "<|im_end|>\n")
    assert second.endswith(
        "<|im_start|>user\n<tool_response>\nResult of get_weather: Sunny\n</tool_response>"
        "<|im_end|>\n<|im_start|>assistant\n"
    )


# ------------------------------------------------------------------------ parsing (fast)


def test_parse_tool_call_and_final_answer() -> None:
    specs = to_tool_specs(TOOLS)
    msg = parse_output('{"tool": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}', specs)
    assert msg.content == ""
    (call,) = msg.tool_calls
    assert call["name"] == "get_time" and call["args"] == {"timezone": "Asia/Tokyo"}
    assert call["id"].startswith("call_") and call["type"] == "tool_call"
    answer = parse_output('{"tool": "final_answer", "arguments": {"text": "Done."}}', specs)
    assert answer.content == "Done." and not answer.tool_calls


@pytest.mark.parametrize(
    ("text", "choice", "match"),
    [
        ("Sure! The weather is nice.", None, "not JSON"),
        ('{"tool": "get_time"}', None, "no arguments"),
        ('{"tool": "delete_all", "arguments": {}}', None, "not allowed"),
        ('{"tool": "final_answer", "arguments": {"text": "x"}}', "any", "not allowed"),
        ('{"tool": "get_time", "arguments": {}}', None, "without timezone"),
    ],
)
def test_parse_rejects_unusable_output(text: str, choice: Any, match: str) -> None:
    with pytest.raises(ModelError, match=match):
        parse_output(text, to_tool_specs(TOOLS), choice)


# ------------------------------------------------------------------------ model plumbing (fast)


class FakeServer:
    """Stands in for xllamacpp.Server: replays outputs and records requests."""

    def __init__(self, outputs: list[str]) -> None:
        self.outputs = list(outputs)
        self.requests: list[dict[str, Any]] = []
        self.cached = 0

    def handle_completions(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        text = self.outputs.pop(0)
        prompt_tokens = len(request["prompt"]) // 4
        evaluated = prompt_tokens - self.cached
        self.cached = prompt_tokens + len(text) // 4
        return {
            "choices": [{"text": text, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4},
            "timings": {"prompt_n": evaluated, "cache_n": prompt_tokens - evaluated},
        }


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    servers: list[FakeServer] = []

    def install(outputs: list[str]) -> tuple[LocalChatModel, FakeServer]:
        server = FakeServer(outputs)
        servers.append(server)
        engine = local.engine.Engine(server, threading.Lock(), 0.0)
        monkeypatch.setattr(local.engine, "engine_for", lambda *a: engine)
        return LocalChatModel(model_path=gguf), server

    return install


def test_bind_tools_accepts_agent_extras(fake_model) -> None:
    model, _ = fake_model([])
    bound = model.bind_tools(TOOLS, tool_choice="any", parallel_tool_calls=False, strict=True)
    assert isinstance(bound, Runnable)
    assert bound.kwargs["tool_choice"] == "any"  # type: ignore[attr-defined]
    assert [t["function"]["name"] for t in bound.kwargs["tools"]] == ["get_weather", "get_time"]  # type: ignore[attr-defined]
    assert "strict" not in bound.kwargs  # type: ignore[attr-defined]
    with pytest.raises(ConfigError):
        model.bind_tools(TOOLS, tool_choice="missing_tool")


def test_create_agent_loop_with_metadata(fake_model) -> None:
    from langchain.agents import create_agent

    model, server = fake_model(
        [
            '{"tool": "get_weather", "arguments": {"city": "Lyon"}}',
            '{"tool": "final_answer", "arguments": {"text": "Sunny in Lyon."}}',
        ]
    )
    agent = create_agent(model, TOOLS, system_prompt="Use tools.")
    out = agent.invoke({"messages": [HumanMessage("Weather in Lyon?")]})
    messages = out["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert messages[2].content == "Sunny and 21 C in Lyon."
    assert messages[-1].content == "Sunny in Lyon."
    first, second = server.requests
    assert second["prompt"].startswith(first["prompt"] + server_output(messages[1]))
    assert "json_schema" in first and first["cache_prompt"] is True
    meta = messages[-1].response_metadata
    assert meta["model_name"] == "qwen2.5-coder-1.5b" and meta["prompt_tokens_evaluated"] > 0
    assert meta["prompt_tokens_evaluated"] < messages[-1].usage_metadata["input_tokens"]
    usage = messages[1].usage_metadata
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def server_output(message: AIMessage) -> str:
    return message.additional_kwargs["local_output"]


def test_structured_output_and_async(fake_model) -> None:
    class Verdict(BaseModel):
        verdict: str
        confidence: int

    model, server = fake_model(
        [
            '{"tool": "Verdict", "arguments": {"verdict": "VALID", "confidence": 80}}',
            '{"tool": "get_time", "arguments": {"timezone": "UTC"}}',
        ]
    )
    result = model.with_structured_output(Verdict).invoke("Decide.")
    assert result == Verdict(verdict="VALID", confidence=80)
    names = [b["properties"]["tool"]["const"] for b in server.requests[0]["json_schema"]["anyOf"]]
    assert names == ["Verdict"]  # structured output forces the tool: no final answer
    reply = asyncio.run(model.bind_tools(TOOLS).ainvoke("Time in UTC?"))
    assert reply.tool_calls[0]["args"] == {"timezone": "UTC"}


def test_cut_json_is_a_model_error(fake_model) -> None:
    model, server = fake_model(['{"tool": "get_time", "argum'])
    server.handle_completions = _with_finish(server.handle_completions, "length")  # type: ignore[method-assign]
    with pytest.raises(ModelError, match="max_tokens"):
        model.bind_tools(TOOLS).invoke("Time?")


def _with_finish(fn: Any, reason: str) -> Any:
    def wrapped(request: dict[str, Any]) -> dict[str, Any]:
        result = fn(request)
        result["choices"][0]["finish_reason"] = reason
        return result

    return wrapped


def test_missing_model_file_is_config_error(tmp_path: Path) -> None:
    model = LocalChatModel(model_path=tmp_path / "absent.gguf")
    with pytest.raises(ConfigError, match=r"run `make model` \(or `casework model prepare`\)"):
        model.invoke("hi")


def test_unknown_local_name_lists_known() -> None:
    with pytest.raises(ConfigError, match=re.escape("qwen2.5-coder-1.5b")):
        load_local_model("llama-7b")


# ------------------------------------------------------------------------ the real model (slow)


@pytest.fixture(scope="module")
def real_model() -> LocalChatModel:
    return load_local_model()


@pytest.mark.slow
@pytest.mark.local_model
def test_real_two_tool_call_parses(real_model: LocalChatModel) -> None:
    reply = real_model.bind_tools(TOOLS).invoke([HumanMessage("What's the weather in Lyon?")])
    (call,) = reply.tool_calls
    assert call["name"] == "get_weather" and call["args"]["city"].lower() == "lyon"
    assert reply.response_metadata["model_name"] == "qwen2.5-coder-1.5b"
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] > 100


@pytest.mark.slow
@pytest.mark.local_model
def test_real_prefix_cache_evaluates_only_new_tokens(real_model: LocalChatModel) -> None:
    bound = real_model.bind_tools(TOOLS)
    history: list[Any] = [
        SystemMessage("Answer with tools."),
        HumanMessage("Check the weather in Oslo."),
    ]
    first = bound.invoke(history)
    call = first.tool_calls[0]
    history += [first, ToolMessage("Snow, -3 C.", tool_call_id=call["id"], name=call["name"])]
    second = bound.invoke(history)
    before = first.usage_metadata["input_tokens"] + first.usage_metadata["output_tokens"]
    new_tokens = second.usage_metadata["input_tokens"] - before
    evaluated = second.response_metadata["prompt_tokens_evaluated"]
    # +1: the end-of-turn token is sampled but never decoded; +2: the model may split the
    # JSON's closing braces differently from the tokenizer (see bench.local_tools).
    assert 0 < evaluated <= new_tokens + 3, (evaluated, new_tokens)
    assert evaluated < second.usage_metadata["input_tokens"] / 3


@pytest.mark.slow
@pytest.mark.local_model
def test_llama_load_check(real_model: LocalChatModel) -> None:
    seconds = local.llama_load_check(real_model.model_path)
    assert 0 < seconds < 120


def test_local_tools_bench_reports_figures(fake_model) -> None:
    import io

    from rich.console import Console

    from casework.bench.local_tools import print_local_tools_report, run_local_tools_bench

    model, _ = fake_model(
        [
            '{"tool": "lookup_receipt", "arguments": {"receipt_id": "R-1042"}}',  # right
            '{"tool": "lookup_receipt", "arguments": {"receipt_id": "R-1"}}',  # wrong tool
            '{"tool": "lookup_receipt", "arguments": {"receipt_id": "R-3001"}}',  # 3 steps
            '{"tool": "get_policy", "arguments": {"topic": "meals"}}',
            '{"tool": "final_answer", "arguments": {"text": "Approved."}}',
        ]
    )
    result = run_local_tools_bench(model, limit=2, progress=False)
    assert result["cases"] == 2 and result["valid_output_rate"] == 1.0
    assert result["tool_accuracy"] == 0.5 and result["argument_accuracy"] == 0.5
    assert result["rows"][1]["tool"] == "lookup_receipt" and not result["rows"][1]["tool_ok"]
    assert set(result["seconds_per_call"]) == {"mean", "p50", "max"}
    steps = result["prefix_cache"]["steps"]
    assert [s["tool"] for s in steps] == ["lookup_receipt", "get_policy", FINAL_ANSWER]
    assert all(s["extra_evaluated"] == 0 for s in steps[1:]) and result["prefix_cache"]["warm"]
    out = io.StringIO()
    print_local_tools_report(result, Console(file=out, width=120))
    assert "correct tool" in out.getvalue() and "receipt-by-id" in out.getvalue()


def test_bench_cases_are_well_formed() -> None:
    from casework.bench.local_tools import load_cases

    data = load_cases()
    assert len(data["cases"]) == 20
    for case in data["cases"]:
        assert 3 <= len(case["tools"]) <= 5, case["id"]
        expected = case["expected"]
        assert expected["tool"] in case["tools"] or expected["tool"] == FINAL_ANSWER
        if expected["tool"] != FINAL_ANSWER:
            params = data["tools"][expected["tool"]]["parameters"]["properties"]
            assert set(expected["args"]) <= set(params), case["id"]
        build_output_schema(to_tool_specs([
            {"type": "function", "function": {"name": n, **data["tools"][n]}} for n in case["tools"]
        ]))  # fmt: skip
