"""Prompt rendering (Qwen2.5 ChatML) and parsing one turn's JSON output into an AIMessage.

Rendering is deterministic and an assistant turn is rendered exactly as the model wrote it,
so each step's prompt extends the previous prompt + output and llama.cpp only evaluates the
new tokens.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from casework.errors import ModelError
from casework.llm.local.schema import FINAL_ANSWER, ToolSpec, normalize_tool_choice, sanitize_schema

__all__ = ["DEFAULT_SYSTEM", "parse_output", "render_prompt"]

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _text(content: Any) -> str:
    """Plain text of a message's content: str, None, or a list of content blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                kind = block.get("type")
                if kind == "text" or (kind is None and "text" in block):
                    parts.append(str(block.get("text", "")))
                elif kind in ("tool_use", "tool_call", "reasoning", "thinking"):
                    continue  # rendered from tool_calls, or private to another model
                else:
                    parts.append(f"[{kind or 'content'} omitted]")
        return "\n".join(p for p in parts if p)
    return str(content)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [truncated {len(text) - limit} characters]"


def _tools_block(specs: Sequence[ToolSpec], allowed: list[str], final_ok: bool) -> str:
    lines = []
    for spec in specs:
        entry: dict[str, Any] = {"name": spec.name}
        if spec.description:
            entry["description"] = spec.description
        entry["parameters"] = sanitize_schema(spec.parameters, for_prompt=True)
        lines.append(_dumps(entry))
    call = '{"tool": "<tool name>", "arguments": {<arguments matching its parameters>}}'
    answer = '{"tool": "final_answer", "arguments": {"text": "<your answer>"}}'
    if final_ok and allowed:
        rule = f"To call a tool, reply: {call}\nTo answer without calling a tool, reply: {answer}"
    elif final_ok:
        rule = f"Do not call a tool now. Reply: {answer}"
    elif len(allowed) == 1 and len(specs) > 1:
        rule = f'You must call the tool "{allowed[0]}" now. Reply: {call}'
    else:
        rule = f"You must call one of the tools now. Reply: {call}"
    return (
        "# Tools\n\n"
        "You can call the following tools. Each line inside <tools></tools> gives a tool's "
        "name, what it does, and the JSON schema of its arguments.\n"
        "<tools>\n" + "\n".join(lines) + "\n</tools>\n\n"
        "Reply with exactly one JSON object and nothing else. Take argument values from the "
        "conversation.\n" + rule
    )


def _call_json(name: str, args: Mapping[str, Any]) -> str:
    return _dumps({"tool": name, "arguments": dict(args)})


def _render_ai(message: AIMessage, *, with_tools: bool) -> str:
    raw = message.additional_kwargs.get("local_output")
    calls = message.tool_calls
    if not with_tools:
        if calls:  # a tool call in a tool-less turn: show it as what it was
            return "\n".join(_call_json(c["name"], c["args"]) for c in calls)
        return _text(message.content)
    if calls:
        rendered = [_call_json(c["name"], c["args"]) for c in calls]
        # Reuse the model's own bytes when they still mean the same call (e.g. "12.50" vs 12.5,
        # \u escapes), so the prompt extends the cached prefix exactly.
        if len(calls) == 1 and isinstance(raw, str) and _same_json(raw, rendered[0]):
            return raw
        return "\n".join(rendered)
    answer = _call_json(FINAL_ANSWER, {"text": _text(message.content)})
    if isinstance(raw, str) and _same_json(raw, answer):
        return raw
    return answer


def _same_json(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return False


def render_prompt(
    messages: Sequence[BaseMessage],
    specs: Sequence[ToolSpec] = (),
    tool_choice: Any = None,
    *,
    max_tool_result_chars: int = 3000,
) -> str:
    """Render a conversation into Qwen2.5 ChatML, ending with an open assistant turn.

    Leading system messages merge into one system turn (followed by the tools block when tools
    are bound); later system messages stay in place, so appending messages only ever appends
    text. Assistant tool calls render as the JSON the model produces; tool results render as
    a user turn "Result of <tool>: …" (truncated to ``max_tool_result_chars``); consecutive
    results share one turn.
    """
    with_tools = bool(specs)
    msgs = list(messages)
    head: list[str] = []
    while msgs and isinstance(msgs[0], SystemMessage):
        text = _text(msgs.pop(0).content).strip()
        if text:
            head.append(text)
    system = "\n\n".join(head) or DEFAULT_SYSTEM
    if with_tools:
        allowed, final_ok = normalize_tool_choice(tool_choice, [s.name for s in specs])
        system = f"{system}\n\n{_tools_block(specs, allowed, final_ok)}"
    out = [_turn("system", system)]

    call_names: dict[str, str] = {}
    pending_results: list[str] = []

    def flush_results() -> None:
        if pending_results:
            body = "\n".join(f"<tool_response>\n{r}\n</tool_response>" for r in pending_results)
            out.append(_turn("user", body))
            pending_results.clear()

    for msg in msgs:
        if isinstance(msg, ToolMessage):
            name = msg.name or call_names.get(msg.tool_call_id, "tool")
            label = "Error from" if msg.status == "error" else "Result of"
            body = _truncate(_text(msg.content).strip() or "(empty)", max_tool_result_chars)
            pending_results.append(f"{label} {name}: {body}")
            continue
        flush_results()
        if isinstance(msg, SystemMessage):
            out.append(_turn("system", _text(msg.content)))
        elif isinstance(msg, HumanMessage):
            out.append(_turn("user", _text(msg.content)))
        elif isinstance(msg, AIMessage):
            for call in msg.tool_calls:
                if call_id := call.get("id"):
                    call_names[call_id] = call["name"]
            out.append(_turn("assistant", _render_ai(msg, with_tools=with_tools)))
        elif isinstance(msg, ChatMessage):
            role = msg.role if msg.role in ("system", "user", "assistant") else "user"
            out.append(_turn(role, _text(msg.content)))
        else:
            out.append(_turn("user", _text(msg.content)))
    flush_results()
    return "".join(out) + "<|im_start|>assistant\n"


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def parse_output(text: str, specs: Sequence[ToolSpec], tool_choice: Any = None) -> AIMessage:
    """Turn the model's constrained JSON into an AIMessage (a tool call or a final answer).

    Raises ModelError when the text is not one allowed call with its required arguments —
    which also catches llama.cpp silently ignoring a schema it could not compile.
    """
    allowed, final_ok = normalize_tool_choice(tool_choice, [s.name for s in specs])
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ModelError(f"The local model's reply is not JSON: {text[:200]!r}.") from exc
    if not isinstance(data, dict) or not isinstance(data.get("arguments"), dict):
        raise ModelError(f"The local model's reply has no arguments object: {text[:200]!r}.")
    name, args = data.get("tool"), data["arguments"]
    if name == FINAL_ANSWER and final_ok and isinstance(args.get("text"), str):
        return AIMessage(content=args["text"], additional_kwargs={"local_output": text})
    if name not in allowed:
        raise ModelError(f"The local model chose {name!r}, which is not allowed this turn.")
    spec = next(s for s in specs if s.name == name)
    required = sanitize_schema(spec.parameters).get("required", [])  # as the grammar saw it
    missing = [r for r in required if r not in args]
    if missing:
        raise ModelError(f"The local model called {name} without {', '.join(missing)}.")
    call = {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex}", "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call], additional_kwargs={"local_output": text})
