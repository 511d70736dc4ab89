"""The run harness on its own: ids, usage, the trace's records, events and the typed end."""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import HumanMessage
from langgraph.types import Interrupt
from pydantic import BaseModel

from casework.llm import ScriptedChatModel, call, say
from casework.runtime import Decision, EndReason, Run, RunResult, run_info
from casework.runtime.traces import read_trace
from casework.runtime.usage import Usage


class Label(Decision):
    verdict: Literal["VALID", "INVALID", "NEEDS_REVIEW"]


def asked(run: Run, model: ScriptedChatModel, text: str) -> list[dict]:
    """One direct model call under the run, its reply recorded as events."""
    reply = model.invoke([HumanMessage(text)], config=run.config())
    return run.updates({"model": {"messages": [reply]}})


def test_a_direct_run_counts_usage_records_events_and_ends_typed(tmp_path) -> None:
    model = ScriptedChatModel(steps=[call("lookup", word="TOTAL"), say("It is a total.")])
    run = Run(
        "probe", model="scripted", strategy="single", trace_dir=tmp_path, payload={"w": "TOTAL"}
    )
    events = asked(run, model, "label the word TOTAL") + asked(run, model, "and now")
    assert [(e["type"], e.get("tool") or e.get("text")) for e in events] == [
        ("tool", "lookup"),
        ("text", "It is a total."),
    ]
    run.count(Usage(model_calls=1, input_tokens=10, output_tokens=1))  # a call LangChain missed
    result = run.end(
        Label(verdict="VALID", confidence=90, reasoning="r"), EndReason.SUBMIT, "looked it up"
    )

    # the scripted model counts words: 4 + 2 in, 2 (the call's args) + 4 out, and the count
    usage = result.usage
    assert (usage.model_calls, usage.input_tokens, usage.output_tokens) == (3, 16, 9)
    assert (usage.tool_calls, usage.cost_usd) == (0, 0.0)
    assert result.thread_id == result.run_id and len(result.run_id) == 12
    assert result.trace_path == tmp_path / f"probe-{result.run_id}.jsonl"

    records = read_trace(result.trace_path)
    assert [r["type"] for r in records] == ["run_start", "tool", "text", "run_end"]
    start, end = records[0], records[-1]
    assert {k: start[k] for k in ("run_id", "thread_id", "agent", "model", "strategy")} == {
        "run_id": result.run_id,
        "thread_id": result.run_id,
        "agent": "probe",
        "model": "scripted",
        "strategy": "single",
    }
    assert start["payload"] == {"w": "TOTAL"}
    assert records[1] == {**events[0], "t": records[1]["t"]}
    assert (end["ended_by"], end["detail"], end["result"]["verdict"]) == (
        "submit",
        "looked it up",
        "VALID",
    )
    assert (end["usage"]["model_calls"], end["usage"]["total_tokens"]) == (3, 25)

    info = result.decision.run
    assert info == run_info(result, strategy="single", model="scripted")
    assert info.ended_by is EndReason.SUBMIT and info.detail == "looked it up"
    assert info.usage is usage and info.trace_path == result.trace_path


def test_without_a_trace_dir_nothing_is_written_and_an_interrupt_is_kept(tmp_path) -> None:
    run = Run("probe", thread_id="case-7")
    paused = Interrupt(value={"action": "cancel"}, id="i1")
    events = run.updates({"__interrupt__": (paused,)})
    assert events == [{"type": "interrupt", "interrupts": [{"id": "i1", "value": paused.value}]}]
    result: RunResult[Label] = run.end(None, EndReason.INTERRUPTED)
    assert (result.thread_id, result.trace_path, result.decision) == ("case-7", None, None)
    assert result.interrupts == [{"id": "i1", "value": {"action": "cancel"}}]
    assert result.interrupted and result.usage.model_calls == 0
    assert list(tmp_path.iterdir()) == []


def test_a_run_that_is_not_a_decision_keeps_its_end_on_the_result(tmp_path) -> None:
    """A strategy's own response model (sql's) carries no ``run``: the result does."""

    class Answer(BaseModel):
        query: str

    run = Run("sql", trace_dir=tmp_path)
    result = run.end(Answer(query="SELECT 1"), EndReason.ERROR_MODEL, "the reply was cut off")
    assert (result.ended_by, result.detail) == (EndReason.ERROR_MODEL, "the reply was cut off")
    assert read_trace(result.trace_path)[-1]["result"] == {"query": "SELECT 1"}
