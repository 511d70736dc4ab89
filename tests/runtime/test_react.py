"""The ReAct builder with scripted models: decisions, scoping, limits, budgets, events, traces."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Literal

import pytest
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from casework.config import Limits
from casework.errors import SourceUnavailable, ToolRetry
from casework.llm import ScriptedChatModel, call, say
from casework.llm.roles import RoleModels
from casework.runtime import Decision as PlatformDecision
from casework.runtime import EndReason, ReactAgent, RunInfo
from casework.runtime.react_steps import SUBMIT_NUDGE
from casework.runtime.runconfig import RunConfig
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


def _config(model, limits=None, trace_dir=None) -> RunConfig:
    return RunConfig(models=RoleModels.given(model), limits=limits, traces=trace_dir)


def agent(model, limits=None, trace_dir=None, **kw) -> ReactAgent[Decision]:
    return ReactAgent(
        config=_config(model, limits, trace_dir),
        role="agent",
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


@pytest.mark.parametrize("caps", [None, {"get_word": 5}])
@pytest.mark.parametrize("run_async", [False, True])
def test_the_nudge_gives_the_model_one_more_turn_with_and_without_after_model_middleware(
    caps, run_async
):
    """Without other after-model hooks the nudge is added inside the model call; with them
    (tool caps, approvals) in the runtime's after_model node. Either way the model gets its
    turn back and its submit shows in the event stream."""
    prompts: list[str] = []

    def submit_after_the_nudge(messages):
        prompts.append(str(messages[-1].content))
        return call("submit_decision", decision="VALID", confidence=95, reasoning="r")

    model = ScriptedChatModel(steps=[say("fine"), submit_after_the_nudge])
    built = agent(model, tool_caps=caps)
    if run_async:

        async def collect():
            return [e async for e in built.aiter_events("v", context=WordRef(1), trace=False)]

        events = asyncio.run(collect())
    else:
        events = list(built.iter_events("v", context=WordRef(1), trace=False))
    model.assert_exhausted()
    assert prompts == [SUBMIT_NUDGE.format(submit="submit_decision")]
    assert [(e["type"], e.get("tool") or e.get("text")) for e in events[:-1]] == [
        ("text", "fine"),
        ("tool", "submit_decision"),
        ("tool_result", "submit_decision"),
    ]
    assert events[-1]["result"].ended_by is EndReason.SUBMIT

    stubborn = ScriptedChatModel(steps=[say("fine"), say("still fine")])
    result = agent(stubborn, tool_caps=caps).run("v", context=WordRef(1), trace=False)
    assert result.ended_by is EndReason.NO_DECISION and stubborn.calls == 2


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
    order: list[str] = []

    def responder(messages, tools):
        if any(m.type == "tool" for m in messages):
            order.append("submit")
            return call("submit_decision", decision="VALID", confidence=90, reasoning="r")
        order.append("lookup")
        return call("get_word")

    model = ScriptedChatModel(responder=responder, latency=0.05)
    a = agent(model)

    async def main():
        return await asyncio.gather(
            *(a.arun("v", context=WordRef(i), trace=False) for i in range(10))
        )

    results = asyncio.run(main())
    assert all(r.ended_by == "submit" for r in results)
    # overlapped, not serial: every run asked its first question before any run got its
    # answer and submitted (serial runs would alternate lookup, submit, lookup, ...)
    assert order == ["lookup"] * 10 + ["submit"] * 10


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


# --------------------------------------------------------------- EndReason, RunInfo, failures


class Claim(PlatformDecision):
    """The claim's verdict."""

    verdict: Literal["VALID", "INVALID", "NEEDS_REVIEW"]


@tool
def ledger(entry: str) -> str:
    """Look an entry up in the ledger."""
    if entry == "down":
        raise SourceUnavailable("ledger", "the ledger database is not reachable")
    return f"{entry}: paid"


def claim_agent(model, limits=None, **kw) -> ReactAgent[Claim]:
    return ReactAgent(
        config=_config(model, limits),
        role="agent",
        tools=[ledger],
        decision_model=Claim,
        system_prompt="s",
        **kw,
    )


def test_run_info_is_attached_to_submitted_and_fallback_decisions():
    model = ScriptedChatModel(
        steps=[
            call("ledger", entry="INV-1"),
            call("submit_decision", verdict="VALID", confidence=80, reasoning="paid"),
        ]
    )
    result = claim_agent(model).run("check", thread_id="th-1", trace=False)
    assert result.ended_by is EndReason.SUBMIT
    run = result.decision.run
    assert isinstance(run, RunInfo)
    assert (run.ended_by, run.model, run.thread_id, run.run_id) == (
        EndReason.SUBMIT,
        "scripted",
        "th-1",
        result.run_id,
    )
    assert run.tool_names == ["ledger", "submit_decision"] and run.usage.model_calls == 2
    assert "run" not in result.decision.model_dump()
    limited = claim_agent(
        ScriptedChatModel(steps=[call("ledger", entry="a")] * 3), limits=Limits(max_model_calls=2)
    ).run("check", trace=False)
    assert limited.decision.verdict == "NEEDS_REVIEW"
    assert limited.decision.run.ended_by is EndReason.LIMIT_MODEL_CALLS
    assert limited.decision.run.tool_names == ["ledger", "ledger"]


def test_model_error_detail_is_kept_apart_from_the_end_reason():
    from casework.errors import ModelError

    def broken(messages):
        raise ModelError("output cut off at max_tokens")

    result = claim_agent(ScriptedChatModel(steps=[broken, broken])).run("v", trace=False)
    assert result.ended_by is EndReason.ERROR_MODEL
    assert result.detail == "output cut off at max_tokens"
    assert result.decision.run.detail == "output cut off at max_tokens"
    assert "max_tokens" in result.decision.reasoning


def test_submit_tool_schema_never_contains_run():
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from casework.llm.local import build_output_schema, render_prompt, to_tool_specs

    agent_ = claim_agent(ScriptedChatModel(steps=[]))
    submit = agent_.tools[-1]
    params = convert_to_openai_tool(submit)["function"]["parameters"]
    assert set(params["properties"]) == {"verdict", "confidence", "reasoning", "evidence"}
    specs = to_tool_specs(agent_.tools)
    branch = next(
        b
        for b in build_output_schema(specs)["anyOf"]
        if b["properties"]["tool"]["const"] == "submit_decision"
    )
    assert set(branch["properties"]["arguments"]["properties"]) == {
        "verdict",
        "confidence",
        "reasoning",
        "evidence",
    }
    prompt = render_prompt([HumanMessage("check")], specs)
    assert '"run"' not in prompt and "RunInfo" not in prompt


def test_unavailable_source_is_an_observation_and_the_run_goes_on():
    model = ScriptedChatModel(
        steps=[
            call("ledger", entry="down"),
            call("ledger", entry="INV-2"),
            call("submit_decision", verdict="NEEDS_REVIEW", confidence=40, reasoning="partial"),
        ]
    )
    result = claim_agent(model).run("check", trace=False)
    assert result.ended_by is EndReason.SUBMIT
    down, up, _ = result.tool_calls
    assert down.ok is True  # an observation, not a failure
    assert json.loads(down.output) == {
        "status": "unavailable",
        "source": "ledger",
        "reason": "the ledger database is not reachable",
    }
    assert (up.ok, up.output) == (True, "INV-2: paid")


@pytest.mark.parametrize("caps", [None, {"ledger": 5}])
def test_limits_end_the_run_with_and_without_after_model_middleware(caps):
    """Without other after-model hooks the loop ends inside the model call; with them
    (tool caps, approvals) it ends before the model node. Both stop at the same place."""
    model = ScriptedChatModel(steps=[call("ledger", entry="a")] * 5)
    result = claim_agent(model, limits=Limits(max_tool_calls=2), tool_caps=caps).run(
        "check", trace=False
    )
    assert result.ended_by is EndReason.LIMIT_TOOL_CALLS
    assert result.tool_names == ["ledger", "ledger"] and model.calls == 2


def test_sync_and_async_event_streams_are_the_same():
    def script():
        return ScriptedChatModel(
            steps=[
                call("ledger", entry="down"),
                call("submit_decision", verdict="VALID", confidence=70, reasoning="r"),
            ]
        )

    def shape(events):
        return [(e["type"], e.get("tool"), e.get("ok")) for e in events[:-1]]

    sync_events = list(claim_agent(script()).iter_events("v", trace=False))

    async def collect():
        return [e async for e in claim_agent(script()).aiter_events("v", trace=False)]

    async_events = asyncio.run(collect())
    assert (
        shape(sync_events)
        == shape(async_events)
        == [
            ("tool", "ledger", None),
            ("tool_result", "ledger", True),
            ("tool", "submit_decision", None),
            ("tool_result", "submit_decision", True),
        ]
    )
    assert sync_events[-1]["result"].ended_by == async_events[-1]["result"].ended_by == "submit"
