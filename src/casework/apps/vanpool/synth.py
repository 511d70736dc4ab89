"""The synthetic roster this project ships, and the truth of what was injected into it.

Deterministic (fixed seed): ``python -m casework.apps.vanpool.synth`` rewrites
``data/roster.json`` (40 vanpools, 300 employees, roster-file format), ``data/injected.json``
(per vanpool: the scenario and the expected result of each check) and the evaluation
datasets in ``data/eval/``. Expected answers are the scenario the generator *planted*
(a rider moved 300 miles away, a night worker put in a day vanpool), written down before
any rule looks at the data; the rules are never asked what the answer is.

Names and addresses are invented; ZIP codes are real (``zipcodes`` package) so distances are.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from casework.apps.vanpool.synth_roster import HAND_OVERLAP, SEED, SHIFTS, SITES, generate

__all__ = ["DATA_DIR", "write"]

DATA_DIR = Path(__file__).parent / "data"


# ---------------------------------------------------------------------------- eval datasets
def _case(
    cid: str, inputs: dict[str, Any], expected: dict[str, Any], metadata: dict[str, Any]
) -> dict[str, Any]:
    return {"id": cid, "inputs": inputs, "expected": expected, "metadata": metadata}


def shift_cases(rows: list[dict[str, Any]], kinds: dict[str, str]) -> list[dict[str, Any]]:
    """The spec's phase-1 dataset: 20 valid, 20 conflict, 20 edge groups of employees."""
    rng = random.Random(SEED + 1)
    pool: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        pool.setdefault((r["timezone"], kinds[r["employee_id"]]), []).append(r["employee_id"])

    def pick(tz: str, kind: str, n: int, taken: set[str]) -> list[str]:
        free = [e for e in pool.get((tz, kind), []) if e not in taken]
        chosen = rng.sample(free, n)
        taken.update(chosen)
        return chosen

    tzs = sorted({s.timezone for s in SITES})
    # (scenario_type, complexity, majority kind, n majority, odd kind or None, conflict?)
    plans: list[tuple[str, str, str, int, str | None, bool, str]] = []
    valid: list[tuple[Any, ...]] = [
        ("standard_9_to_5", "simple", "DAY", 3, None),
        ("night_shift_group", "simple", "NIGHT", 3, None),
        ("early_and_day", "simple", "DAY", 3, "EARLY"),
        ("flexible_schedule", "medium", "DAY", 3, "FLEX"),
        ("split_shift", "medium", "DAY", 2, "SPLIT"),
    ]
    conflict: list[tuple[Any, ...]] = [
        ("night_with_morning_vanpool", "simple", "DAY", 3, "NIGHT"),
        ("weekend_with_weekday_vanpool", "simple", "DAY", 3, "WEEKEND"),
        ("day_with_night_vanpool", "simple", "NIGHT", 3, "DAY"),
        ("timing_mismatch_flex_vs_night", "medium", "NIGHT", 2, "FLEX"),
        ("rotating_mostly_off", "complex", "DAY", 2, "ROTATING_NIGHT"),
    ]
    edge: list[tuple[Any, ...]] = [
        ("partial_overlap_30min_boundary", "complex", "DAY", 3, "SWING", False),
        ("partial_overlap_20min", "complex", "DAY", 3, "LATE_SWING", True),
        ("rotating_shift_half_overlap", "complex", "DAY", 2, "ROTATING", False),
        ("novel_shift_compressed_4x10", "medium", "DAY", 2, "COMPRESSED", False),
        ("novel_shift_panama_vs_weekday", "complex", "DAY", 2, "PANAMA", False),
    ]
    for n in range(20):
        s = valid[n % len(valid)]
        plans.append((s[0], s[1], s[2], s[3], s[4], False, "valid"))
    for n in range(20):
        s = conflict[n % len(conflict)]
        plans.append((s[0], s[1], s[2], s[3], s[4], True, "conflict"))
    for n in range(20):
        s = edge[n % len(edge)]
        plans.append((s[0], s[1], s[2], s[3], s[4], s[5], "edge"))
    cases = []
    for n, (scenario, complexity, majority, count, odd, is_conflict, category) in enumerate(plans):
        taken: set[str] = set()
        tz = tzs[n % len(tzs)]
        for attempt in range(len(tzs)):
            tz = tzs[(n + attempt) % len(tzs)]
            if len(pool.get((tz, majority), [])) >= count and (odd is None or pool.get((tz, odd))):
                break
        ids = pick(tz, majority, count, taken)
        odd_ids = pick(tz, odd, 1, taken) if odd else []
        employee_ids = ids + odd_ids
        rng.shuffle(employee_ids)
        expected: dict[str, Any] = {
            "verdict": "fail" if is_conflict else "pass",
            "should_detect_conflict": is_conflict,
            "conflicting_employees": odd_ids if is_conflict else [],
            "reasoning": _shift_reason(scenario, odd, majority, is_conflict),
        }
        hand = HAND_OVERLAP.get((odd or majority, majority))
        if odd and hand is not None:
            expected["overlap_minutes"] = {odd_ids[0]: hand}
        cases.append(
            _case(
                f"shift-{category}-{n + 1:02d}",
                {"employee_ids": employee_ids},
                expected,
                {"scenario_type": scenario, "complexity": complexity, "category": category},
            )
        )
    return cases


def _shift_reason(scenario: str, odd: str | None, majority: str, conflict: bool) -> str:
    maj = SHIFTS[majority][0]
    if odd is None:
        return f"Every employee works {maj}; the group can share a vanpool."
    odd_name = SHIFTS[odd][0]
    if conflict:
        return f"One employee works {odd_name}, which does not overlap the group's {maj} by 30 minutes."
    return f"The {odd_name} employee still overlaps the group's {maj} by at least 30 minutes."


def location_cases(truth: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One case per vanpool. The expected call is one ``check_commute_distance`` (the prompt's
    step 1); a model that names riders must name exactly the vanpool's (parameter accuracy)."""
    riders: dict[str, list[str]] = {}
    for row in rows:
        riders.setdefault(row["vanpool_id"], []).append(row["employee_id"])
    return [
        _case(
            f"location-{t['vanpool_id']}",
            {"vanpool_id": t["vanpool_id"]},
            {
                "verdict": t["expected"]["location"],
                "failed_employees": t["expected"]["failing_employees"]["location"],
                "tools": ["check_commute_distance"],
                "optimal_path": ["check_commute_distance"],
                "tool_args": {
                    "check_commute_distance": {"employee_ids": sorted(riders[t["vanpool_id"]])}
                },
            },
            {
                "scenario_type": t["scenario"],
                "complexity": "complex" if t["scenario"].startswith("edge") else "simple",
            },
        )
        for t in truth
    ]


def case_manager_cases(truth: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for t in truth:
        failed = t["expected"]["failed_checks"]
        tools = ["run_location_specialist", "run_shift_specialist"]
        if failed:
            tools += ["upsert_case", "run_outreach"]
        out.append(
            _case(
                f"cm-{t['vanpool_id']}",
                {"vanpool_id": t["vanpool_id"]},
                {
                    "verdict": "pending_reply" if failed else "verified",
                    "failed_checks": failed,
                    "tools": tools,
                    "optimal_path": tools,
                    **({"tool_args": {"upsert_case": {"failed_checks": failed}}} if failed else {}),
                },
                {"scenario_type": t["scenario"]},
            )
        )
    # Error handling: an unknown id, and a distance service that times out (no distance is no
    # evidence either way: no case, a person looks).
    clean = next(t["vanpool_id"] for t in truth if t["scenario"] == "clean")
    out.append(
        _case(
            "cm-error-unknown-vanpool",
            {"vanpool_id": "VP-999"},
            {"verdict": "NEEDS_REVIEW", "failed_checks": [], "error_mentions": "VP-999"},
            {"scenario_type": "error_unknown_id", "complexity": "edge"},
        )
    )
    out.append(
        _case(
            f"cm-error-distance-timeout-{clean}",
            {"vanpool_id": clean, "fault": "distance_timeout"},
            {
                "verdict": "NEEDS_REVIEW",
                "failed_checks": [],
                "error_mentions": "unavailable",
                "tools": ["run_location_specialist", "run_shift_specialist"],
                "optimal_path": ["run_location_specialist", "run_shift_specialist"],
            },
            {"scenario_type": "error_timeout", "complexity": "edge"},
        )
    )
    return out


_SILENCE_THEN_APPROVE: list[dict[str, Any]] = [
    {"day": 7, "timeout": True},
    {"day": 14, "timeout": True},
    {"day": 21, "timeout": True},
    {"day": 22, "review": "approve"},
]
_RESOLVED = {"verdict": "closed", "outcome": "resolved", "cancelled_employees": []}
_Plan = tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]
"""(name, the vanpool's truth, its events by day, the expected ending)."""


def _failing(t: dict[str, Any]) -> list[str]:
    return sorted({e for ids in t["expected"]["failing_employees"].values() for e in ids})


def lifecycle_cases(truth: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Whole case lives (``scenarios.py``): replies, portal fixes, timeouts, reviews, each
    on its own vanpool. A clean or edge vanpool gets silence and an approving reviewer: an
    auditor that flags it wrongly ends in a membership cancelled against the truth."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for t in truth:
        by_kind.setdefault(t["scenario"], []).append(t)
    plans = [*_location_plans(by_kind), *_shift_plans(by_kind)]
    for kind in (
        "clean",
        "edge_distance_inside",
        "edge_boundary_overlap",
        "edge_pto",
        "edge_rotating",
    ):
        plans.append(
            (
                f"{kind}_unflagged",
                by_kind[kind][-1],
                _SILENCE_THEN_APPROVE,
                {"verdict": "verified"},
            )
        )
    return [
        _case(
            f"life-{name.replace('_', '-')}-{t['vanpool_id']}",
            {"vanpool_id": t["vanpool_id"], "events": events},
            {**expected, "planted_employees": _failing(t)},
            {"scenario_type": name, "complexity": "edge" if "edge" in name else "simple"},
        )
        for name, t, events, expected in plans
    ]


def _location_plans(by_kind: dict[str, list[dict[str, Any]]]) -> list[_Plan]:
    """Lives of vanpools with a rider too far away: acknowledged, fixed, silent, cancelled."""
    loc = by_kind["location_mismatch"]
    return [
        (
            "acknowledged",
            loc[0],
            [{"day": 2, "reply": "Got it, thanks. My details are correct as listed."}],
            _RESOLVED,
        ),
        (
            "update_after_portal_fix",
            loc[1],
            [
                {"day": 1, "moves_near_pickup": _failing(loc[1])[0]},
                {
                    "day": 2,
                    "reply": "Just changed my home ZIP in the employee portal, it was an old address.",
                },
            ],
            _RESOLVED,
        ),
        (
            "silent_fix",
            loc[2],
            [{"day": 3, "moves_near_pickup": _failing(loc[2])[0]}, {"day": 7, "timeout": True}],
            _RESOLVED,
        ),
        (
            "silence_cancelled",
            loc[3],
            _SILENCE_THEN_APPROVE,
            {"verdict": "closed", "outcome": "cancelled", "cancelled_employees": _failing(loc[3])},
        ),
    ]


def _shift_plans(by_kind: dict[str, list[dict[str, Any]]]) -> list[_Plan]:
    """Lives of vanpools with a shift conflict: questions, escalation, rejection, no fix."""
    shift, both = by_kind["shift_mismatch"], by_kind["both_mismatch"]
    return [
        (
            "question_then_acknowledged",
            shift[0],
            [
                {"day": 1, "reply": "What exactly does this review look at? Who sees my address?"},
                {"day": 3, "reply": "Thank you, yes I am still at the same address and shift."},
            ],
            _RESOLVED,
        ),
        (
            "escalation_reviewed_then_acknowledged",
            shift[1],
            [
                {
                    "day": 1,
                    "reply": "I dispute this completely and I am forwarding it to my union rep.",
                },
                {"day": 2, "review": "approve"},
                {"day": 4, "reply": "Ok noted. All fine, no changes."},
            ],
            _RESOLVED,
        ),
        (
            "silence_cancellation_rejected",
            both[0],
            [*_SILENCE_THEN_APPROVE[:3], {"day": 22, "review": "reject"}],
            _RESOLVED,
        ),
        (
            "update_without_fix_three_times",
            shift[2],
            [
                {
                    "day": 1,
                    "reply": "My shift changed to days two weeks ago; HR has the new schedule now.",
                },
                {
                    "day": 2,
                    "reply": "I was on night rotation but I'm back on the day shift since Monday.",
                },
                {
                    "day": 3,
                    "reply": "I switched teams and now work 7 to 3:30, updated it in Workday.",
                },
            ],
            {"verdict": "pre_cancel", "cancelled_employees": []},
        ),
    ]


# Replies written for the outreach dataset: (text, bucket).
REPLIES = [
    ("Thanks for checking, all good here. I still ride VP every morning.", "acknowledgment"),
    ("Confirmed, nothing has changed on my side.", "acknowledgment"),
    ("Got it, thanks. My details are correct as listed.", "acknowledgment"),
    ("Received, I acknowledge the review. Everything is accurate.", "acknowledgment"),
    ("Ok noted. All fine, no changes.", "acknowledgment"),
    ("Thank you, yes I am still at the same address and shift.", "acknowledgment"),
    ("What exactly does this review look at? Who sees my address?", "question"),
    ("How long does the verification take, and do I need to do anything?", "question"),
    ("Can you explain what 'shift mismatch' means? Which shift do you have on file?", "question"),
    ("Is my membership paused while you review this?", "question"),
    ("Which pickup point is this about? I was not sure from the email.", "question"),
    ("Who should I contact if my manager changes my schedule next month?", "question"),
    ("I moved last month to 94536, I will update my address in the portal.", "update"),
    ("My shift changed to days two weeks ago; HR has the new schedule now.", "update"),
    ("I switched teams and now work 7 to 3:30, updated it in Workday.", "update"),
    ("New address: I live in Newark now, close to the pickup. Portal updated today.", "update"),
    ("I was on night rotation but I'm back on the day shift since Monday.", "update"),
    ("Just changed my home ZIP in the employee portal, it was an old address.", "update"),
    (
        "This is ridiculous. I have ridden this van for 5 years and you accuse me of fraud?",
        "escalation",
    ),
    ("I dispute this completely and I am forwarding it to my union rep.", "escalation"),
    ("Stop emailing me. If you cancel my seat I will file a complaint with HR.", "escalation"),
    ("?? I don't understand what you want, whatever, do what you want", "escalation"),
    ("Your data is wrong and I'm not going to fix your mistakes for you.", "escalation"),
    ("I'm very upset about this accusation, I want to talk to a manager now.", "escalation"),
]


def outreach_cases() -> list[dict[str, Any]]:
    return [
        _case(
            f"outreach-{n + 1:02d}",
            {"reply": text},
            {"bucket": bucket, "hitl_required": bucket == "escalation"},
            {"scenario_type": bucket},
        )
        for n, (text, bucket) in enumerate(REPLIES)
    ]


def _jsonl(items: list[dict[str, Any]]) -> Iterator[str]:
    for item in items:
        yield json.dumps(item, sort_keys=False) + "\n"


def write(data_dir: Path = DATA_DIR) -> dict[str, int]:
    rows, truth, kinds = generate()
    (data_dir / "eval").mkdir(parents=True, exist_ok=True)
    (data_dir / "roster.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    (data_dir / "injected.json").write_text(json.dumps(truth, indent=1) + "\n")
    datasets = {
        "shift.jsonl": shift_cases(rows, kinds),
        "location.jsonl": location_cases(truth, rows),
        "case_manager.jsonl": case_manager_cases(truth),
        "outreach.jsonl": outreach_cases(),
        "lifecycle.jsonl": lifecycle_cases(truth),
    }
    for name, cases in datasets.items():
        for case in cases:  # which strategy a case runs through (`casework eval vanpool`)
            case["metadata"]["task"] = name.removesuffix(".jsonl").replace("_", "-")
        (data_dir / "eval" / name).write_text("".join(_jsonl(cases)))
    return {
        "employees": len(rows),
        "vanpools": len(truth),
        **{k: len(v) for k, v in datasets.items()},
    }


if __name__ == "__main__":  # pragma: no cover - regenerates the committed data
    print(write())
