"""Evaluation of the vanpool app: the four datasets, the spec's domain metrics as pure
functions over ``(expected, output)``, the spec's targets, and a small runner.

Datasets (``data/eval/*.jsonl``, one case per line ``{"id", "inputs", "expected",
"metadata"}``): ``shift`` (the spec's phase-1 set: 20 valid, 20 conflict, 20 edge),
``location``, ``case_manager`` (tools and trajectory) and ``outreach`` (bucket, HITL).
Expected answers are the planted truth written by ``synth.py``, never the rules' output.

``output`` is a decision's ``model_dump(mode="json")`` plus ``tool_calls`` (name, args, ok)
and ``ended_by``. Trajectory and calibration metrics reuse ``casework.evals.evaluators``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from casework.apps.vanpool.rules import parse_time
from casework.apps.vanpool.synth import DATA_DIR
from casework.errors import InputError
from casework.evals.evaluators.calibration import expected_calibration_error
from casework.evals.evaluators.trajectory import evaluate_trajectory, tool_choice

__all__ = [
    "DATASETS",
    "SHIFT_EVIDENCE_FIELDS",
    "TARGETS",
    "bucket_match",
    "business_figures",
    "conflict_outcome",
    "employees_match",
    "evidence_completeness",
    "false_cancel_rate",
    "hitl_match",
    "load_dataset",
    "overlap_accuracy",
    "resolution_hours",
    "run_dataset",
    "score_case",
    "summarize",
    "time_format_ok",
    "verdict_match",
]

DATASETS = ("shift", "location", "case_manager", "outreach")
SHIFT_EVIDENCE_FIELDS = ("employee_id", "shift_id", "vanpool_id", "overlap_minutes")
OVERLAP_TOLERANCE = 5
TARGETS = {
    "verdict_accuracy": 0.95,
    "shift_conflict_accuracy": 0.98,
    "accuracy_simple": 0.95,
    "accuracy_edge": 0.80,
    "tool_choice_accuracy": 0.95,
    "parameter_accuracy": 0.98,
    "avg_tools_per_case": 3.0,
    "redundant_call_rate": 0.05,
    "trajectory_optimality": 0.70,
    "avg_path_length": 4.0,
    "path_efficiency": 0.80,
    "self_correction_success": 0.90,
    "circular_rate": 0.01,
}
AT_MOST = {"avg_tools_per_case", "redundant_call_rate", "avg_path_length", "circular_rate"}


def load_dataset(name: str, path: Path | None = None) -> list[dict[str, Any]]:
    path = path or DATA_DIR / "eval" / f"{name}.jsonl"
    if not path.is_file():
        raise InputError(f"Dataset {path} does not exist; datasets: {', '.join(DATASETS)}.")
    cases = []
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} line {n} is not JSON ({exc.msg}).") from None
        if not {"id", "inputs", "expected"} <= case.keys():
            raise InputError(f"{path} line {n} lacks id, inputs or expected.")
        cases.append(case)
    return cases


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


def score_case(dataset: str, case: Mapping[str, Any], output: Mapping[str, Any]) -> dict[str, Any]:
    """Every metric of one case for its dataset."""
    exp = case["expected"]
    meta = case.get("metadata") or {}
    row: dict[str, Any] = {
        "id": case["id"],
        "simple": meta.get("complexity") == "simple",
        "edge": meta.get("category") == "edge"
        or str(meta.get("scenario_type", "")).startswith("edge"),
        "confidence": output.get("confidence"),
    }
    if dataset == "shift":
        row.update(
            verdict=verdict_match(exp, output),
            conflict=conflict_outcome(exp, output),
            employees=employees_match(exp, output, "conflicting_employees"),
            overlap=overlap_accuracy(exp, output),
            evidence_completeness=evidence_completeness(output),
            time_format=time_format_ok(output),
        )
    elif dataset == "location":
        row.update(
            verdict=verdict_match(exp, output),
            conflict=conflict_outcome(exp, output),
            employees=employees_match(exp, output, "failed_employees"),
        )
    elif dataset == "outreach":
        row.update(
            verdict=bucket_match(exp, output),
            bucket=bucket_match(exp, output),
            hitl=hitl_match(exp, output),
        )
    elif dataset == "case_manager":
        calls = output.get("tool_calls") or []
        row.update(
            verdict=verdict_match(exp, output),
            failed_checks=sorted(output.get("failed_checks") or []) == sorted(exp["failed_checks"]),
        )
        if output.get("ended_by") == "rules":
            return row  # no tools were chosen: the trajectory metrics do not apply
        choice = tool_choice(calls, exp["tools"], inputs=case["inputs"])
        traj = evaluate_trajectory(calls, exp["optimal_path"], ended_by=output.get("ended_by"))
        row.update(
            tool_choice=choice.correct,
            parameter_accuracy=choice.param_accuracy,
            tools=traj.path_length,
            redundant=len(traj.redundant),
            optimal=traj.optimal,
            efficiency=traj.path_efficiency,
            circular=traj.is_circular,
            errors=traj.errors,
            corrected=traj.corrected,
            trajectory_type=traj.type,
        )
    else:
        raise InputError(f"Unknown dataset {dataset!r}; datasets: {', '.join(DATASETS)}.")
    return row


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(dataset: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Dataset-level metrics, each with its spec target when the spec names one."""
    m: dict[str, Any] = {"cases": len(rows)}
    m["verdict_accuracy"] = _mean([float(r["verdict"]) for r in rows])
    for flag, key in (("simple", "accuracy_simple"), ("edge", "accuracy_edge")):
        picked = [float(r["verdict"]) for r in rows if r.get(flag)]
        if picked:
            m[key] = _mean(picked)
    if "conflict" in (rows[0] if rows else {}):
        outcomes = [r["conflict"] for r in rows]
        negatives = outcomes.count("fp") + outcomes.count("tn")
        positives = outcomes.count("tp") + outcomes.count("fn")
        m["false_positive_rate"] = outcomes.count("fp") / negatives if negatives else None
        m["false_negative_rate"] = outcomes.count("fn") / positives if positives else None
        m["employees_exact"] = _mean([float(r["employees"]) for r in rows])
    if dataset == "shift":
        m["shift_conflict_accuracy"] = _mean(
            [r["overlap"] for r in rows if r["overlap"] is not None]
        )
        m["evidence_completeness"] = _mean([r["evidence_completeness"] for r in rows])
        m["time_format_valid"] = _mean([float(r["time_format"]) for r in rows])
    if dataset == "outreach":
        m["bucket_match"] = _mean([float(r["bucket"]) for r in rows])
        m["hitl_match"] = _mean([float(r["hitl"]) for r in rows])
    if dataset == "case_manager":
        m["failed_checks_exact"] = _mean([float(r["failed_checks"]) for r in rows])
    agent_rows = [r for r in rows if "tool_choice" in r]  # runs that chose tools
    if dataset == "case_manager" and agent_rows:
        m.update(_trajectory_summary(agent_rows))
    confident = [
        (float(r["confidence"]) / 100, bool(r["verdict"]))
        for r in rows
        if r.get("confidence") is not None
    ]
    if confident:
        m["calibration_ece"] = expected_calibration_error(
            [c for c, _ in confident], [ok for _, ok in confident]
        )
    m["targets"] = {
        k: {"target": t, "value": m[k], "met": (m[k] <= t if k in AT_MOST else m[k] >= t)}
        for k, t in TARGETS.items()
        if m.get(k) is not None
    }
    return m


def _trajectory_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    m: dict[str, Any] = {}
    m["tool_choice_accuracy"] = _mean([float(r["tool_choice"]) for r in rows])
    params = [r["parameter_accuracy"] for r in rows if r["parameter_accuracy"] is not None]
    m["parameter_accuracy"] = _mean(params)
    m["avg_tools_per_case"] = _mean([r["tools"] for r in rows])
    total = sum(r["tools"] for r in rows)
    m["redundant_call_rate"] = sum(r["redundant"] for r in rows) / total if total else 0.0
    m["trajectory_optimality"] = _mean([float(bool(r["optimal"])) for r in rows])
    m["avg_path_length"] = m["avg_tools_per_case"]
    m["path_efficiency"] = _mean([r["efficiency"] for r in rows if r["efficiency"] is not None])
    m["circular_rate"] = _mean([float(r["circular"]) for r in rows])
    errors = sum(r["errors"] for r in rows)
    m["self_correction_success"] = sum(r["corrected"] for r in rows) / errors if errors else None
    return m


# ---------------------------------------------------------------------------- runner
def _output(decision: Any) -> dict[str, Any]:
    out = decision.model_dump(mode="json")
    run = decision.run
    out["tool_calls"] = [
        {"name": c.name, "args": c.args, "id": c.id, "ok": c.ok, "output": c.output}
        for c in (run.tool_calls if run else [])
    ]
    out["ended_by"] = str(run.ended_by) if run else None
    out["model_calls"] = getattr(run.usage, "model_calls", 0) if run and run.usage else 0
    return out


def run_dataset(
    dataset: str, strategy: str, deps: Any, *, limit: int | None = None
) -> dict[str, Any]:
    """Run one dataset through a strategy on ``deps`` (a seeded store) and score it."""
    from casework.apps.vanpool import strategies as s

    registry, make_input = {
        "shift": (s.SHIFT_STRATEGIES, lambda i: s.ShiftInput(tuple(i["employee_ids"]))),
        "location": (s.LOCATION_STRATEGIES, lambda i: s.AuditInput(i["vanpool_id"])),
        "case_manager": (s.STRATEGIES, lambda i: s.AuditInput(i["vanpool_id"])),
        "outreach": (s.OUTREACH_STRATEGIES, lambda i: s.ReplyInput(i["reply"])),
    }[dataset]
    if strategy not in registry:
        raise InputError(f"Unknown strategy {strategy!r}; use {', '.join(registry)}.")
    cases = load_dataset(dataset)[:limit]
    rows, seconds, model_calls = [], [], []
    for case in cases:
        started = time.perf_counter()
        decision = registry[strategy](make_input(case["inputs"]), deps)
        seconds.append(time.perf_counter() - started)
        out = _output(decision)
        model_calls.append(out["model_calls"])
        rows.append(score_case(dataset, case, out))
    summary = summarize(dataset, rows)
    summary["seconds_per_case"] = _mean(seconds)
    summary["model_calls_per_case"] = _mean(model_calls)
    return {"dataset": dataset, "strategy": strategy, "summary": summary, "rows": rows}


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
