"""Domain metrics as pure functions, the datasets' shape, and the rules baseline's scores."""

from __future__ import annotations

from collections import Counter

import pytest

from casework.apps.vanpool.evaluation import (
    TARGETS,
    conflict_outcome,
    evidence_completeness,
    load_dataset,
    overlap_accuracy,
    run_dataset,
    score_case,
    summarize,
    time_format_ok,
)

FULL = {"employee_id": "EMP-0001", "shift_id": "SH-1", "vanpool_id": None, "overlap_minutes": 0}


def test_phase1_dataset_has_the_spec_shape() -> None:
    cases = load_dataset("shift")
    assert len(cases) == 60
    assert Counter(c["metadata"]["category"] for c in cases) == {
        "valid": 20,
        "conflict": 20,
        "edge": 20,
    }
    for c in cases:
        assert c["inputs"]["employee_ids"]
        assert c["expected"]["verdict"] in ("pass", "fail")
        assert c["expected"]["should_detect_conflict"] == (c["expected"]["verdict"] == "fail")
        assert {"scenario_type", "complexity"} <= c["metadata"].keys()
    scenarios = {
        c["metadata"]["scenario_type"] for c in cases if c["metadata"]["category"] == "edge"
    }
    assert {
        "partial_overlap_20min",
        "rotating_shift_half_overlap",
        "novel_shift_panama_vs_weekday",
    } <= scenarios
    assert len(load_dataset("location")) == len(load_dataset("case_manager")) == 38
    assert Counter(c["expected"]["bucket"] for c in load_dataset("outreach")) == {
        "acknowledgment": 6,
        "question": 6,
        "update": 6,
        "escalation": 6,
    }


def test_conflict_outcomes() -> None:
    fail, ok = (
        {"verdict": "fail", "should_detect_conflict": True},
        {"verdict": "pass", "should_detect_conflict": False},
    )
    assert conflict_outcome(fail, {"verdict": "fail"}) == "tp"
    assert conflict_outcome(fail, {"verdict": "NEEDS_REVIEW"}) == "fn"
    assert conflict_outcome(ok, {"verdict": "fail"}) == "fp"
    assert conflict_outcome(ok, {"verdict": "pass"}) == "tn"


def test_overlap_accuracy_within_five_minutes() -> None:
    expected = {"overlap_minutes": {"EMP-0001": 20, "EMP-0002": 0}}
    out = {
        "evidence": [
            {"ref": "EMP-0001", "fields": {"overlap_minutes": 24}},
            {"ref": "EMP-0002", "fields": {"overlap_minutes": 6}},
        ]
    }
    assert overlap_accuracy(expected, out) == 0.5
    assert overlap_accuracy({}, out) is None
    assert overlap_accuracy(expected, {"evidence": []}) == 0.0


def test_evidence_completeness() -> None:
    partial = {k: v for k, v in FULL.items() if k != "shift_id"}
    out = {
        "evidence": [
            {"ref": "EMP-0001", "fields": FULL},
            {"ref": "EMP-0002", "fields": partial},
            {"ref": "VP-101", "fields": {}},  # not per employee: not counted
        ]
    }
    assert evidence_completeness(out) == 0.5
    assert evidence_completeness({"evidence": []}) == 0.0


def test_time_format() -> None:
    assert time_format_ok({"reasoning": "Works 22:00-06:30, overlap 0 min."})
    assert not time_format_ok({"reasoning": "Works 10pm to 6:30am."})
    assert not time_format_ok({"reasoning": "Starts 25:00."})


def test_summary_targets_and_rates() -> None:
    case = {
        "id": "c",
        "inputs": {},
        "expected": {
            "verdict": "fail",
            "should_detect_conflict": True,
            "conflicting_employees": ["EMP-0001"],
        },
        "metadata": {"complexity": "simple"},
    }
    right = score_case(
        "shift",
        case,
        {
            "verdict": "fail",
            "confidence": 90,
            "failed_employees": ["EMP-0001"],
            "evidence": [{"ref": "EMP-0001", "fields": FULL}],
        },
    )
    wrong = score_case("shift", case, {"verdict": "pass", "confidence": 90, "evidence": []})
    m = summarize("shift", [right, wrong])
    assert (m["verdict_accuracy"], m["false_negative_rate"], m["employees_exact"]) == (
        0.5,
        0.5,
        0.5,
    )
    assert m["targets"]["verdict_accuracy"] == {
        "target": TARGETS["verdict_accuracy"],
        "value": 0.5,
        "met": False,
    }
    assert m["calibration_ece"] == pytest.approx(0.4)


def test_trajectory_metrics_for_an_agent_run() -> None:
    case = load_dataset("case_manager")[0]
    calls = [{"name": n, "args": {}, "ok": True} for n in case["expected"]["tools"]]
    calls.insert(1, {"name": "run_location_specialist", "args": {}, "ok": True})  # a repeat
    out = {
        "verdict": case["expected"]["verdict"],
        "failed_checks": case["expected"]["failed_checks"],
        "tool_calls": calls,
        "ended_by": "submit",
        "confidence": 80,
    }
    row = score_case("case_manager", case, out)
    assert (row["tool_choice"], row["tools"], row["redundant"]) == (True, len(calls), 1)
    m = summarize("case_manager", [row])
    assert m["redundant_call_rate"] == pytest.approx(1 / len(calls))
    assert m["targets"]["redundant_call_rate"]["met"] is False


def test_rules_baseline_scores(deps) -> None:
    shift = run_dataset("shift", "rules", deps)["summary"]
    assert (
        shift["verdict_accuracy"],
        shift["shift_conflict_accuracy"],
        shift["evidence_completeness"],
    ) == (1.0, 1.0, 1.0)
    outreach = run_dataset("outreach", "rules", deps)["summary"]
    assert outreach["bucket_match"] == pytest.approx(
        23 / 24
    )  # "nothing has changed" reads as an update
    assert outreach["hitl_match"] == 1.0


def test_business_figures() -> None:
    from datetime import UTC, datetime, timedelta

    from casework.apps.vanpool.evaluation import false_cancel_rate, resolution_hours

    assert false_cancel_rate(
        {"VP-1": ["EMP-1", "EMP-2"], "VP-2": ["EMP-3"]}, {"VP-1": ["EMP-1"], "VP-2": ["EMP-3"]}
    ) == pytest.approx(1 / 3)
    assert false_cancel_rate({}, {}) is None
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    spans = [(t0, t0 + timedelta(hours=2)), (t0, t0 + timedelta(hours=10)), (t0, None)]
    assert resolution_hours(spans) == {"cases": 2, "mean_hours": 6.0, "median_hours": 6.0}


def test_business_figures_over_a_lifecycle(deps, truth, clock) -> None:
    from casework.apps.vanpool import lifecycle
    from casework.apps.vanpool.evaluation import business_figures
    from conftest import first

    result, _ = lifecycle.audit_vanpool(deps, first(truth, "shift_mismatch")["vanpool_id"])
    for _ in range(3):
        clock.advance(days=7, minutes=1)
        lifecycle.tick(deps)
    lifecycle.decide_approval(deps, result.case_id, "approve")
    figures = business_figures(deps.repo, list(truth.values()))
    assert figures["cases"] == 1 and figures["false_cancel_rate"] == 0.0
    assert figures["mean_hours"] == pytest.approx(21 * 24 + 3 / 60)
    assert figures["cancelled_memberships"] == 1
