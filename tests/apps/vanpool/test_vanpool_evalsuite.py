"""`casework eval vanpool`: the suite's task dispatch, its domain metrics, the rules baseline
through the harness, and the Case Manager's trajectory scored on a scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from vanpool_helpers import specialist_responder

from casework.apps.vanpool.evalsuite import (
    TARGETS,
    eval_suite,
    task_input,
    task_of,
    vanpool_metrics,
)
from casework.apps.vanpool.strategies import AuditInput, ReplyInput, ShiftInput
from casework.config import Settings
from casework.errors import InputError
from casework.evals import CaseOutput, EvalCase, RunConfig, run_suite
from casework.llm import ScriptedChatModel, call

FULL = {"employee_id": "EMP-0001", "shift_id": "SH-1", "vanpool_id": None, "overlap_minutes": 20}


def _config(tmp_path: Path, **fields: Any) -> RunConfig:
    settings = Settings(home=tmp_path / "home", allow_network_models=False)
    return RunConfig(
        settings=settings, progress=False, store=False, report=False, concurrency=1, **fields
    )


def test_each_case_goes_to_its_task() -> None:
    shift = EvalCase("s", {"employee_ids": ["EMP-0001"]}, metadata={"task": "shift"})
    location = EvalCase("l", {"vanpool_id": "VP-101"}, metadata={"task": "location"})
    untagged = EvalCase("u", {"vanpool_id": "VP-101"})
    reply = EvalCase("r", {"reply": "ok"})
    assert task_input(shift) == ("shift", ShiftInput(("EMP-0001",)))
    assert task_input(location) == ("location", AuditInput("VP-101"))
    assert task_input(untagged) == ("case-manager", AuditInput("VP-101"))
    assert task_input(reply) == ("outreach", ReplyInput("ok"))
    with pytest.raises(InputError, match="Case x has neither"):
        task_of(EvalCase("x", {"text": "?"}))
    with pytest.raises(InputError, match="lacks the input 'reply'"):
        task_input(EvalCase("y", {}, metadata={"task": "outreach"}))


def test_domain_metrics_of_a_shift_case() -> None:
    case = EvalCase(
        "c",
        {"employee_ids": ["EMP-0001"]},
        expected={
            "verdict": "fail",
            "should_detect_conflict": True,
            "conflicting_employees": ["EMP-0001"],
            "overlap_minutes": {"EMP-0001": 24},
        },
        metadata={"task": "shift", "category": "edge", "complexity": "complex"},
    )
    right = vanpool_metrics(
        case,
        CaseOutput(
            {
                "verdict": "fail",
                "failed_employees": ["EMP-0001"],
                "reasoning": "Overlap 20 min, under 30.",
                "evidence": [{"ref": "EMP-0001", "fields": FULL}],
            }
        ),
    )
    assert right == {
        "accuracy_simple": None,
        "accuracy_edge": 1.0,
        "false_positive_rate": None,
        "false_negative_rate": 0.0,
        "employees_exact": 1.0,
        "shift_conflict_accuracy": 1.0,
        "evidence_completeness": 1.0,
        "time_format_valid": 1.0,
    }
    missed = vanpool_metrics(case, CaseOutput({"verdict": "pass", "reasoning": "10pm start"}))
    assert (missed["accuracy_edge"], missed["false_negative_rate"]) == (0.0, 1.0)
    assert (missed["shift_conflict_accuracy"], missed["time_format_valid"]) == (0.0, 0.0)


def test_domain_metrics_of_an_outreach_case() -> None:
    case = EvalCase(
        "o",
        {"reply": "I dispute this."},
        expected={"bucket": "escalation", "hitl_required": True},
        metadata={"task": "outreach", "complexity": "simple"},
    )
    out = vanpool_metrics(case, CaseOutput({"bucket": "update", "hitl_required": False}))
    assert out == {
        "accuracy_simple": 0.0,
        "accuracy_edge": None,
        "bucket_match": 0.0,
        "hitl_match": 0.0,
    }


def test_rules_baseline_through_the_harness(tmp_path: Path) -> None:
    suite = eval_suite()
    shift = run_suite(suite, _config(tmp_path, strategy="rules"))
    m = shift.metrics
    assert (m["cases"], m["errors"], m["verdict_accuracy"]) == (60, 0, 1.0)
    assert (m["shift_conflict_accuracy"], m["evidence_completeness"]) == (1.0, 1.0)
    assert (m["accuracy_simple"], m["accuracy_edge"], m["false_positive_rate"]) == (1.0, 1.0, 0.0)
    outreach = run_suite(suite, _config(tmp_path, strategy="rules", dataset="outreach"))
    # The keyword classifier reads "Confirmed, nothing has changed" as an update.
    assert outreach.metrics["bucket_match"] == pytest.approx(23 / 24)
    assert outreach.metrics["hitl_match"] == 1.0
    assert outreach.metrics["accuracy"] == pytest.approx(23 / 24)
    met = {t.metric: t.met for t in outreach.target_results}
    assert met["verdict_accuracy"] is None  # outreach has buckets, not verdicts


def test_case_manager_trajectory_on_a_scripted_model(tmp_path: Path) -> None:
    both = AIMessage(
        content="",
        tool_calls=[
            *call("run_location_specialist").tool_calls,
            *call("run_shift_specialist").tool_calls,
        ],
    )

    def models(case_id: str, role: str) -> Any:
        if role == "orchestrator":
            return ScriptedChatModel(
                steps=[
                    both,
                    call("submit_decision", verdict="verified", confidence=90, reasoning="ok"),
                ]
            )
        return ScriptedChatModel(responder=specialist_responder)

    run = run_suite(
        eval_suite(),
        _config(tmp_path, strategy="agent", dataset="case-manager", limit=2, base_model=models),
    )
    m = run.metrics
    assert (m["cases"], m["errors"], m["verdict_accuracy"]) == (2, 0, 1.0)
    assert (m["tool_choice_accuracy"], m["trajectory_optimality"]) == (1.0, 1.0)
    assert (m["path_length_mean"], m["redundant_call_rate"], m["circular_rate"]) == (2.0, 0.0, 0.0)
    assert m["failed_checks_exact"] == 1.0
    met = {t.metric: t.met for t in run.target_results}
    assert met["tool_choice_accuracy"] and met["path_length_mean"] and met["circular_rate"]
    assert set(TARGETS) >= {"tool_calls_mean_max", "path_efficiency"}
