"""The flat event stream shared by the CLI, SSE and traces.

Every event is a dict with a ``type``: ``text`` ({text}), ``tool`` ({tool, input, id}),
``tool_result`` ({tool, output, ok, id}), ``interrupt`` ({interrupts}) and, last,
``complete`` ({result}: the ``RunResult``); ``casework.runtime.events.to_json`` turns one
into plain JSON. A graph whose nodes are not ReAct turns (hed's annotation loop) reports
``step`` ({node, ...what the node left}) as each node ends, and while it streams ``model``
({node, role}) as a node's model starts and ``token`` ({node, text}); those two are not traced.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

__all__ = ["Event", "events_from_update", "to_json"]

Event = dict[str, Any]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def events_from_update(update: dict[str, Any]) -> list[Event]:
    """Events from one LangGraph ``updates`` chunk (``{node: state_update}``)."""
    events: list[Event] = []
    for node, delta in update.items():
        if node == "__interrupt__":
            events.append(
                {"type": "interrupt", "interrupts": [{"id": i.id, "value": i.value} for i in delta]}
            )
            continue
        if not isinstance(delta, dict):
            continue
        for msg in delta.get("messages", []) or []:
            if isinstance(msg, AIMessage):
                text = _text(msg.content)
                if text:
                    events.append({"type": "text", "text": text, "node": node})
                for call in msg.tool_calls:
                    events.append(
                        {
                            "type": "tool",
                            "tool": call["name"],
                            "input": call["args"],
                            "id": call["id"],
                        }
                    )
            elif isinstance(msg, ToolMessage):
                events.append(
                    {
                        "type": "tool_result",
                        "tool": msg.name,
                        "output": _text(msg.content),
                        "ok": msg.status != "error",
                        "id": msg.tool_call_id,
                    }
                )
    return events


def to_json(event: Event) -> dict[str, Any]:
    """A JSON-safe copy of an event (the ``complete`` result becomes its summary)."""
    if event["type"] != "complete":
        return event
    result = event["result"]
    decision = result.decision.model_dump(mode="json") if result.decision is not None else None
    return {
        "type": "complete",
        "result": decision,
        "ended_by": result.ended_by,
        "detail": result.detail,
        "run_id": result.run_id,
        "thread_id": result.thread_id,
        "interrupts": result.interrupts,
        "usage": result.usage.to_dict(),
    }
