"""Evidence grounding: the model cites (source, ref), the runtime copies the cited values."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from langchain.tools import ToolRuntime, tool
from pydantic import Field

from casework.llm import ScriptedChatModel, call
from casework.llm.roles import RoleModels
from casework.runtime import Decision, EndReason, ReactAgent
from casework.runtime.decision import (
    EVIDENCE_FIELDS_MAX,
    Evidence,
    ToolCallRecord,
    ground_evidence,
)
from casework.runtime.runconfig import RunConfig

SHIFTS = {
    "vanpool_id": "VP-001",
    "riders": [
        {"employee_id": "EMP-0001", "shift_id": "S1", "overlap_minutes": 480},
        {"employee_id": "EMP-0002", "shift_id": "S7", "overlap_minutes": 0},
    ],
}


def _call(name: str, output: object, ok: bool = True) -> ToolCallRecord:
    text = output if isinstance(output, str) else json.dumps(output)
    return ToolCallRecord(name=name, args={}, id=name, ok=ok, output=text)


def test_ref_selects_the_object_that_carries_it() -> None:
    cited = ground_evidence(
        [Evidence(source="get_employee_shifts", ref="EMP-0002", summary="no overlap")],
        [_call("get_employee_shifts", SHIFTS)],
    )
    assert cited[0].fields == {"employee_id": "EMP-0002", "shift_id": "S7", "overlap_minutes": 0}
    assert cited[0].summary == "no overlap"


def test_unknown_ref_falls_back_to_top_level_scalars() -> None:
    cited = ground_evidence(
        [Evidence(source="Get_Employee_Shifts ", ref="line 9")],
        [_call("get_employee_shifts", SHIFTS)],
    )
    assert cited[0].fields == {"vanpool_id": "VP-001"}


def test_latest_call_wins_and_plain_text_is_quoted() -> None:
    calls = [_call("lookup", {"value": 1}), _call("lookup", {"value": 2})]
    assert ground_evidence([Evidence(source="lookup")], calls)[0].fields == {"value": 2}
    text = ground_evidence([Evidence(source="note")], [_call("note", "x" * 500)])
    assert text[0].fields == {"output": "x" * 300}


def test_items_left_alone() -> None:
    given = Evidence(source="lookup", ref="a", fields={"mine": True})
    uncalled = Evidence(source="never_called", ref="a")
    failed = Evidence(source="broken", ref="a")
    out = ground_evidence(
        [given, uncalled, failed], [_call("lookup", {"a": 1}), _call("broken", {"a": 1}, ok=False)]
    )
    assert [e.fields for e in out] == [{"mine": True}, {}, {}]


def test_fields_are_bounded_scalars() -> None:
    wide = {f"k{i}": i for i in range(30)} | {"nested": {"x": 1}, "tags": ["a", "b"]}
    fields = ground_evidence([Evidence(source="wide")], [_call("wide", wide)])[0].fields
    assert len(fields) == EVIDENCE_FIELDS_MAX
    assert "nested" not in fields


def test_model_schema_has_no_fields_and_caps_items() -> None:
    schema = Decision.model_json_schema()
    assert schema["properties"]["evidence"]["maxItems"] == 5
    assert "fields" not in schema["$defs"]["Evidence"]["properties"]
    # rules strategies may still cite more than the model may
    assert (
        len(
            Decision(
                verdict="x", confidence=1, reasoning="r", evidence=[Evidence(source="s")] * 9
            ).evidence
        )
        == 9
    )


@dataclass(frozen=True)
class Ctx:
    vanpool: str


@tool
def get_employee_shifts(runtime: ToolRuntime[Ctx]) -> dict:
    """The riders' shifts."""
    return {**SHIFTS, "vanpool_id": runtime.context.vanpool}


class ShiftVerdict(Decision):
    verdict: Literal["pass", "fail"] = Field(description="pass or fail")


def test_agent_decision_is_grounded_in_its_own_tool_output() -> None:
    model = ScriptedChatModel(
        steps=[
            call("get_employee_shifts"),
            call(
                "submit_decision",
                verdict="fail",
                confidence=90,
                reasoning="EMP-0002 never overlaps.",
                evidence=[{"source": "get_employee_shifts", "ref": "EMP-0002", "summary": "0 min"}],
            ),
        ]
    )
    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(model)),
        role="agent",
        tools=[get_employee_shifts],
        decision_model=ShiftVerdict,
        system_prompt="Judge the shifts.",
        context_schema=Ctx,
    )
    run = agent.run("VP-009", context=Ctx(vanpool="VP-009"), trace=False)
    assert run.ended_by is EndReason.SUBMIT
    assert run.decision is not None
    assert run.decision.evidence[0].fields == {
        "employee_id": "EMP-0002",
        "shift_id": "S7",
        "overlap_minutes": 0,
    }


@tool
def get_many_riders() -> dict:
    """Forty riders: the output is longer than a run record keeps."""
    return {
        "riders": [
            {"employee_id": f"EMP-{i:04d}", "shift_id": f"S{i}", "overlap_minutes": i}
            for i in range(40)
        ]
    }


def test_grounding_reads_the_whole_output_not_the_record_cut() -> None:
    model = ScriptedChatModel(
        steps=[
            call("get_many_riders"),
            call(
                "submit_decision",
                verdict="fail",
                confidence=90,
                reasoning="EMP-0039 has no overlap to speak of.",
                evidence=[{"source": "get_many_riders", "ref": "EMP-0039"}],
            ),
        ]
    )
    agent = ReactAgent(
        config=RunConfig(models=RoleModels.given(model)),
        role="agent",
        tools=[get_many_riders],
        decision_model=ShiftVerdict,
        system_prompt="Judge the shifts.",
    )
    run = agent.run("go", trace=False)
    assert len(run.tool_calls[0].output) == 2000  # the record is cut ...
    assert run.decision is not None  # ... the citation is not
    assert run.decision.evidence[0].fields == {
        "employee_id": "EMP-0039",
        "shift_id": "S39",
        "overlap_minutes": 39,
    }


def test_a_source_naming_one_tool_loosely_still_cites_it() -> None:
    calls = [_call("get_employee_shifts", SHIFTS), _call("get_vanpool", {"vanpool_id": "VP-1"})]
    out = ground_evidence(
        [
            Evidence(source="functions.get_employee_shifts tool", ref="EMP-0001"),
            Evidence(source="get_employee_shifts or get_vanpool", ref="VP-1"),  # two: none
        ],
        calls,
    )
    assert out[0].fields["shift_id"] == "S1" and out[0].source == "get_employee_shifts"
    assert out[1].fields == {}
