"""Domain metrics as pure functions, the datasets' shape, and the business figures."""

from __future__ import annotations

from collections import Counter

import pytest

from casework.apps.vanpool.evalsuite import DATASETS
from casework.apps.vanpool.evaluation import (
    conflict_outcome,
    evidence_completeness,
    overlap_accuracy,
    time_format_ok,
)
from casework.evals import load_dataset

FULL = {"employee_id": "EMP-0001", "shift_id": "SH-1", "vanpool_id": None, "overlap_minutes": 0}


def test_phase1_dataset_has_the_spec_shape() -> None:
    cases = load_dataset(DATASETS["shift"])
    assert len(cases) == 60
    assert Counter(c.metadata["category"] for c in cases) == {
        "valid": 20,
        "conflict": 20,
        "edge": 20,
    }
    for c in cases:
        assert c.inputs["employee_ids"] and c.metadata["task"] == "shift"
        assert c.expected["verdict"] in ("pass", "fail")
        assert c.expected["should_detect_conflict"] == (c.expected["verdict"] == "fail")
        assert {"scenario_type", "complexity"} <= c.metadata.keys()
    scenarios = {c.metadata["scenario_type"] for c in cases if c.metadata["category"] == "edge"}
    assert {
        "partial_overlap_20min",
        "rotating_shift_half_overlap",
        "novel_shift_panama_vs_weekday",
    } <= scenarios
    assert len(load_dataset(DATASETS["location"])) == 38
    manager = load_dataset(DATASETS["case-manager"])
    assert len(manager) == 40  # every vanpool, an unknown id, a distance timeout
    assert [c.metadata["scenario_type"] for c in manager[38:]] == [
        "error_unknown_id",
        "error_timeout",
    ]
    lives = load_dataset(DATASETS["lifecycle"])
    assert len(lives) == len({c.inputs["vanpool_id"] for c in lives}) == 13  # one vanpool each
    assert Counter(c.expected["bucket"] for c in load_dataset(DATASETS["outreach"])) == {
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
    from vanpool_helpers import first

    from casework.apps.vanpool import lifecycle, service
    from casework.apps.vanpool.evaluation import business_figures

    result, _ = lifecycle.audit_vanpool(deps, first(truth, "shift_mismatch")["vanpool_id"])
    for _ in range(3):
        clock.advance(days=7, minutes=1)
        service.tick(deps)
    service.decide_approval(deps, result.case_id, "approve")
    figures = business_figures(deps.repo, list(truth.values()))
    assert figures["cases"] == 1 and figures["false_cancel_rate"] == 0.0
    assert figures["mean_hours"] == pytest.approx(21 * 24 + 3 / 60)
    assert figures["cancelled_memberships"] == 1
