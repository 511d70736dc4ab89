"""The ReAct builder with scripted models: decisions, scoping, limits, budgets, events, traces."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import pytest
from langchain.tools import ToolRuntime, tool
from pydantic import BaseModel, Field

from casework.config import Limits
from casework.errors import ToolRetry
from casework.llm import ScriptedChatModel, call, say
from casework.runtime import ReactAgent
from casework.runtime.traces import read_trace


@dataclass(frozen=True)
class WordRef:
    word_id: int


SEEN: list[int] = []


@tool
def get_word(runtime: ToolRuntime[WordRef]) -> dict:
    """The word under review."""
    SEEN.append(runtime.context.word_id)
    return {"word_id": runtime.context.word_id, "text": "TOTAL"}


@tool
def flaky(attempt: int) -> str:
    """Fails on the first attempt."""
    if attempt == 1:
        raise ToolRetry("attempt must be 2 or more")
    if attempt == 99:
        raise RuntimeError("backend down")
    return "ok"


class Decision(BaseModel):
    """The decision."""

    decision: Literal["VALID", "INVALID", "NEEDS_REVIEW"]
    confidence: float = Field(ge=0, le=100)
    reasoning: str


def agent(model, **kw) -> ReactAgent[Decision]:
    return ReactAgent(
        model=model,
        tools=[get_word, flaky],
        decision_model=Decision,
        system_prompt="s",
        context_schema=WordRef,
        **kw,
    )


def test_scripted_run_reaches_decision_and_tools_read_context():
    SEEN.clear()
    model = ScriptedChatModel(
        steps=[
            call("get_word"),
            call("submit_decision", decision="VALID", confidence=91, reasoning="r"),
        ]
    )
    result = agent(model).run("validate", context=WordRef(42), trace=False)
    assert result.ended_by == "submit"
    assert result.decision == Decision(decision="VALID", confidence=91, reasoning="r")
    assert result.tool_names == ["get_word", "submit_decision"]
    assert SEEN == [42]
    assert result.usage.model_calls == 2 and result.usage.tool_calls == 2
    model.assert_exhausted()


def test_scoped_ids_are_not_in_the_tool_schema():
    schema = get_word.tool_call_schema.model_json_schema()
    assert "runtime" not in schema.get("properties", {})
    assert "word_id" not in schema.get("properties", {})


def test_model_call_limit_ends_with_needs_review():
    model = ScriptedChatModel(steps=[call("get_word")] * 10)
    result = agent(model, limits=Limits(max_model_calls=3)).run(
        "v", context=WordRef(1), trace=False
    )
    assert result.ended_by == "limit:model_calls"
    assert result.decision.decision == "NEEDS_REVIEW" and result.decision.confidence == 0
    assert model.calls == 3


def test_token_budget_ends_cleanly():
    model = ScriptedChatModel(steps=[call("get_word")] * 10)
    result = agent(model, limits=Limits(max_tokens=5)).run(
        "validate this word please", context=WordRef(1), trace=False
    )
    assert result.ended_by == "budget:tokens"
    assert result.decision.decision == "NEEDS_REVIEW"
    assert model.calls < 10


def test_per_tool_cap_answers_the_model_with_an_error():
    model = ScriptedChatModel(
        steps=[
            call("get_word"),
            call("get_word"),
            call("get_word"),
            call("submit_decision", decision="INVALID", confidence=85, reasoning="r"),
        ]
    )
    result = agent(model, tool_caps={"get_word": 2}).run("v", context=WordRef(1), trace=False)
    assert result.ended_by == "submit"
    assert [c.ok for c in result.tool_calls if c.name == "get_word"] == [True, True, False]


def test_tool_errors_go_back_to_the_model():
    model = ScriptedChatModel(
        steps=[
            call("flaky", attempt=1),
            call("flaky", attempt=99),
            call("flaky", attempt=2),
            call("submit_decision", decision="VALID", confidence=90, reasoning="r"),
        ]
    )
    result = agent(model).run("v", context=WordRef(1), trace=False)
    oks = [(c.ok, c.output) for c in result.tool_calls if c.name == "flaky"]
    assert oks[0] == (False, "attempt must be 2 or more")
    assert oks[1][0] is False and "backend down" in oks[1][1]
    assert oks[2] == (True, "ok")


def test_invalid_submit_is_corrected_by_the_model():
    model = ScriptedChatModel(
        steps=[
            call("submit_decision", decision="MAYBE", confidence=50, reasoning="r"),
            call("submit_decision", decision="INVALID", confidence=88, reasoning="r"),
        ]
    )
    result = agent(model).run("v", context=WordRef(1), trace=False)
    assert result.ended_by == "submit" and result.decision.decision == "INVALID"
    assert [c.ok for c in result.tool_calls] == [False, True]


def test_text_without_submit_is_nudged_once_then_needs_review():
    model = ScriptedChatModel(steps=[say("I think it is fine"), say("still fine")])
    result = agent(model).run("v", context=WordRef(1), trace=False)
    assert result.ended_by == "no_decision" and result.decision.decision == "NEEDS_REVIEW"
    nudged = ScriptedChatModel(
        steps=[say("fine"), call("submit_decision", decision="VALID", confidence=95, reasoning="r")]
    )
    assert agent(nudged).run("v", context=WordRef(1), trace=False).ended_by == "submit"


def test_event_stream_and_trace(tmp_path):
    model = ScriptedChatModel(
        steps=[
            call("get_word"),
            call("submit_decision", decision="VALID", confidence=91, reasoning="r"),
        ]
    )
    events = list(agent(model, trace_dir=tmp_path).iter_events("v", context=WordRef(3)))
    kinds = [e["type"] for e in events]
    assert kinds == ["tool", "tool_result", "tool", "tool_result", "complete"]
    assert events[0] == {"type": "tool", "tool": "get_word", "input": {}, "id": events[0]["id"]}
    result = events[-1]["result"]
    records = read_trace(result.trace_path)
    assert records[0]["type"] == "run_start" and records[-1]["type"] == "run_end"
    assert records[-1]["result"]["decision"] == "VALID"
    assert records[-1]["usage"]["model_calls"] == 2


def test_async_runs_concurrently():
    def responder(messages, tools):
        if any(m.type == "tool" for m in messages):
            return call("submit_decision", decision="VALID", confidence=90, reasoning="r")
        return call("get_word")

    model = ScriptedChatModel(responder=responder, latency=0.05)
    a = agent(model)

    async def main():
        return await asyncio.gather(
            *(a.arun("v", context=WordRef(i), trace=False) for i in range(10))
        )

    import time

    t0 = time.perf_counter()
    results = asyncio.run(main())
    assert all(r.ended_by == "submit" for r in results)
    assert time.perf_counter() - t0 < 10 * 2 * 0.05  # overlapped, not serial


@pytest.mark.parametrize("bad", ["nope", "openai"])
def test_resolve_model_rejects_bad_specs(bad):
    from casework.errors import ConfigError
    from casework.llm import resolve_model

    with pytest.raises(ConfigError):
        resolve_model(bad)


def test_network_models_are_blocked_in_tests():
    from casework.errors import ConfigError
    from casework.llm import resolve_model

    with pytest.raises(ConfigError, match="disabled"):
        resolve_model("openai:gpt-4o-mini")


def test_unusable_model_output_is_retried_once_then_ends_as_needs_review():
    from casework.errors import ModelError

    def broken(messages):
        raise ModelError("output cut off at max_tokens")

    model = ScriptedChatModel(steps=[broken, broken])
    result = agent(model).run("v", context=WordRef(1), trace=False)
    assert result.ended_by.startswith("error:model") and result.decision.decision == "NEEDS_REVIEW"
    recovered = ScriptedChatModel(
        steps=[broken, call("submit_decision", decision="VALID", confidence=90, reasoning="r")]
    )
    assert agent(recovered).run("v", context=WordRef(1), trace=False).ended_by == "submit"
