"""The spec's domain metrics of the vanpool app as pure functions over ``(expected, output)``
(``output`` is a decision's ``model_dump(mode="json")``), and its business figures.

``evalsuite.py`` runs them through the platform harness (``casework eval vanpool``), which
scores verdicts, tool choice, trajectories, calibration and cost itself. Expected answers are
the planted truth written by ``synth.py``, never the rules' output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from casework.apps.vanpool.rules import parse_time
from casework.errors import InputError

__all__ = [
    "SHIFT_EVIDENCE_FIELDS",
    "bucket_match",
    "business_figures",
    "conflict_outcome",
    "employees_match",
    "evidence_completeness",
    "false_cancel_rate",
    "hitl_match",
    "overlap_accuracy",
    "resolution_hours",
    "time_format_ok",
    "verdict_match",
]

SHIFT_EVIDENCE_FIELDS = ("employee_id", "shift_id", "vanpool_id", "overlap_minutes")
OVERLAP_TOLERANCE = 5


# ---------------------------------------------------------------------------- pure metrics
def verdict_match(expected: Mapping[str, Any], output: Mapping[str, Any]) -> bool:
    return output.get("verdict") == expected.get("verdict")


def employees_match(expected: Mapping[str, Any], output: Mapping[str, Any], key: str) -> bool:
    """The flagged employees are exactly the planted ones."""
    return set(output.get("failed_employees") or []) == set(expected.get(key) or [])


def conflict_outcome(expected: Mapping[str, Any], output: Mapping[str, Any]) -> str:
    """tp / fp / fn / tn of conflict detection (a NEEDS_REVIEW counts as not detected)."""
    should = bool(expected.get("should_detect_conflict", expected.get("verdict") == "fail"))
    did = output.get("verdict") == "fail"
    return {(True, True): "tp", (False, True): "fp", (True, False): "fn", (False, False): "tn"}[
        (should, did)
    ]


def overlap_accuracy(
    expected: Mapping[str, Any], output: Mapping[str, Any], tolerance: int = OVERLAP_TOLERANCE
) -> float | None:
    """Share of the hand-computed overlaps the output's evidence states within ±tolerance min."""
    wanted: Mapping[str, int] = expected.get("overlap_minutes") or {}
    if not wanted:
        return None
    stated = {}
    for e in output.get("evidence") or []:
        minutes = (e.get("fields") or {}).get("overlap_minutes")
        if isinstance(minutes, int | float):
            stated[e.get("ref")] = minutes
    hits = sum(
        1 for eid, m in wanted.items() if eid in stated and abs(stated[eid] - m) <= tolerance
    )
    return hits / len(wanted)


def evidence_completeness(output: Mapping[str, Any]) -> float:
    """Share of per-employee evidence items carrying employee_id, shift_id, vanpool_id and
    overlap_minutes (the spec's required fields). No per-employee evidence scores 0."""
    items = [e for e in output.get("evidence") or [] if str(e.get("ref", "")).startswith("EMP-")]
    if not items:
        return 0.0
    complete = sum(
        1 for e in items if all(k in (e.get("fields") or {}) for k in SHIFT_EVIDENCE_FIELDS)
    )
    return complete / len(items)


_AMPM = re.compile(r"\b\d{1,2}(:\d{2})?\s?(am|pm|a\.m\.|p\.m\.)", re.IGNORECASE)
_HHMM = re.compile(r"\b\d{1,2}:\d{2}\b")


def time_format_ok(output: Mapping[str, Any]) -> bool:
    """Times in the reasoning and evidence are 24-hour HH:MM (no am/pm, no 25:00)."""
    text = json.dumps({"r": output.get("reasoning"), "e": output.get("evidence")})
    if _AMPM.search(text):
        return False
    try:
        for t in _HHMM.findall(text):
            parse_time(t if len(t) == 5 else "0" + t)
    except InputError:
        return False
    return True


def bucket_match(expected: Mapping[str, Any], output: Mapping[str, Any]) -> bool:
    return output.get("bucket") == expected.get("bucket")


def hitl_match(expected: Mapping[str, Any], output: Mapping[str, Any]) -> bool:
    return bool(output.get("hitl_required")) == bool(expected.get("hitl_required"))


# ---------------------------------------------------------------------------- business figures
def false_cancel_rate(
    cancelled: Mapping[str, Sequence[str]], truth: Mapping[str, Sequence[str]]
) -> float | None:
    """Share of cancelled memberships (vanpool -> employees) whose rider the planted truth
    does not flag: a cancellation that would have to be reversed."""
    total = sum(len(v) for v in cancelled.values())
    if not total:
        return None
    wrong = sum(1 for vp, ids in cancelled.items() for e in ids if e not in set(truth.get(vp, ())))
    return wrong / total


def resolution_hours(spans: Sequence[tuple[Any, Any]]) -> dict[str, float | None]:
    """Mean and median hours from a case's creation to its resolution (closed cases only)."""
    hours = sorted((end - start).total_seconds() / 3600 for start, end in spans if end is not None)
    if not hours:
        return {"cases": 0, "mean_hours": None, "median_hours": None}
    mid = len(hours) // 2
    median = hours[mid] if len(hours) % 2 else (hours[mid - 1] + hours[mid]) / 2
    return {"cases": len(hours), "mean_hours": sum(hours) / len(hours), "median_hours": median}


def business_figures(repo: Any, truth: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Time to resolution and false-cancel rate over a store's cases (the spec's business metrics)."""
    cases = repo.list_cases()
    cancelled: dict[str, list[str]] = {}
    for entry in repo.audit_log():
        if entry["action"] == "membership_cancelled":
            cancelled.setdefault(entry["vanpool_id"], []).extend(entry["detail"]["employee_ids"])
    flagged = {
        t["vanpool_id"]: [e for ids in t["expected"]["failing_employees"].values() for e in ids]
        for t in truth
    }
    return {
        **resolution_hours([(c.created_at, c.resolved_at) for c in cases]),
        "false_cancel_rate": false_cancel_rate(cancelled, flagged),
        "cancelled_memberships": sum(len(v) for v in cancelled.values()),
    }
