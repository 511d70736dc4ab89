"""The two checks as evidence: what the tools return and what the rules auditor decides from.

``employee_profile``, ``commute_distance`` and ``employee_shifts`` are the tool payloads
(spec evidence types with their citations); ``location_check`` and ``shift_check`` turn them
into the specialists' decisions without a model (the ``rules`` strategy).
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from casework.apps.vanpool.geography import Coordinates, check_distance
from casework.apps.vanpool.models import Employee, LocationDecision, ShiftDecision, Vanpool
from casework.apps.vanpool.rules import (
    MIN_OVERLAP_MINUTES,
    RiderShift,
    Segment,
    ShiftPhase,
    check_shifts,
    parse_pto,
    parse_shift,
    parse_time,
)
from casework.errors import InputError, SourceUnavailable
from casework.runtime import EndReason, Evidence, RunInfo

if TYPE_CHECKING:
    from casework.apps.vanpool.deps import VanpoolDeps

__all__ = [
    "commute_distance",
    "employee_profile",
    "employee_shifts",
    "location_check",
    "service_window",
    "shift_check",
]

RULES_CONFIDENCE = 100.0


def employee_profile(e: Employee) -> dict[str, Any]:
    return {
        "employee_id": e.employee_id,
        "home_zip": e.home_zip,
        "home_coords": {"lat": e.home_lat, "lng": e.home_lng},
        "site": e.site,
    }


def commute_distance(deps: VanpoolDeps, vanpool: Vanpool, e: Employee) -> dict[str, Any]:
    check = check_distance(
        Coordinates(e.home_lat, e.home_lng),
        Coordinates(vanpool.pickup_lat, vanpool.pickup_lng),
        vanpool.max_commute_miles,
        deps.distance,
    )
    return {
        "employee_id": e.employee_id,
        "vanpool_id": vanpool.vanpool_id,
        "home_zip": e.home_zip,
        "distance_miles": check.shown_miles,  # the verdict compared the unrounded miles
        "threshold_miles": check.threshold_miles,
        "provider": check.provider,
        "within_threshold": check.verdict == "pass",
    }


def _rider_shift(e: Employee) -> RiderShift:
    if e.shift_id is None or e.shift_spec is None or e.timezone is None:
        raise InputError(
            f"{e.employee_id} has no shift on record; import the roster with their shift, "
            "schedule and timezone first."
        )
    return RiderShift(
        e.employee_id,
        e.shift_id,
        e.shift_name or e.shift_id,
        parse_shift(e.shift_spec, e.timezone),
        parse_pto(e.pto),
    )


def service_window(vanpool: Vanpool) -> ShiftPhase:
    """The vanpool's service (departure to return, Mon-Fri) as a shift phase, for tie-breaks."""
    return ShiftPhase(
        (0, 1, 2, 3, 4),
        (Segment(parse_time(vanpool.departure_time), parse_time(vanpool.return_time) % 1440),),
        vanpool.timezone,
    )


def employee_shifts(
    employees: list[Employee], on: date, vanpool: Vanpool | None = None
) -> dict[str, Any]:
    """Shifts, PTO and the overlap rule's figures for a group (the vanpool's riders): one
    object per employee with the spec's evidence fields (employee_id, shift_id, vanpool_id,
    overlap_minutes), so a citation of an EMP id grounds all four."""
    check = check_shifts(
        [_rider_shift(e) for e in employees], service_window(vanpool) if vanpool else None, on
    )
    by_id = {e.employee_id: e for e in employees}
    vanpool_id = vanpool.vanpool_id if vanpool else None
    return {
        "vanpool_id": vanpool_id,
        "audit_date": on.isoformat(),
        "majority_shift": {
            "shift_id": check.majority_shift_id,
            "shift_name": check.majority_shift_name,
        },
        "below_rule": [r.employee_id for r in check.failing],
        "employees": [
            {
                "employee_id": r.employee_id,
                "shift_id": r.shift_id,
                "vanpool_id": vanpool_id,
                "shift_name": r.shift_name,
                "schedule": by_id[r.employee_id].shift_spec,
                "timezone": by_id[r.employee_id].timezone,
                "pto": by_id[r.employee_id].pto or None,
                "on_pto_today": r.on_pto,
                "overlap_minutes": r.overlap_minutes,
                "meets_rule": r.passes,
            }
            for r in check.riders
        ],
    }


def location_check(deps: VanpoolDeps, vanpool: Vanpool) -> LocationDecision:
    """The rules-only Location Specialist."""
    evidence = [
        Evidence(
            source="vanpool_pickup",
            ref=vanpool.vanpool_id,
            summary=f"Pickup at ZIP {vanpool.pickup_zip}, threshold {vanpool.max_commute_miles:g} miles.",
            fields={
                "vanpool_id": vanpool.vanpool_id,
                "pickup_coords": {"lat": vanpool.pickup_lat, "lng": vanpool.pickup_lng},
            },
        )
    ]
    failed = []
    try:
        distances = [commute_distance(deps, vanpool, e) for e in vanpool.riders]
    except SourceUnavailable as exc:  # no distance is no evidence either way: a person looks
        return LocationDecision(
            verdict="NEEDS_REVIEW",
            confidence=0,
            reasoning=f"{vanpool.vanpool_id}: {exc}.",
            run=RunInfo(ended_by=EndReason.RULES, strategy="rules", detail=str(exc)),
        )
    for e, d in zip(vanpool.riders, distances, strict=True):
        if not d["within_threshold"]:
            failed.append(e.employee_id)
            evidence.append(
                Evidence(
                    source="employee_profile",
                    ref=e.employee_id,
                    summary=f"{e.employee_id} lives in ZIP {e.home_zip}.",
                    fields={"employee_id": e.employee_id, "home_zip": e.home_zip},
                )
            )
        evidence.append(
            Evidence(
                source="distance_check",
                ref=e.employee_id,
                summary=f"{d['distance_miles']} miles from home to pickup (limit {d['threshold_miles']:g}).",
                fields={k: d[k] for k in ("distance_miles", "threshold_miles", "provider")},
            )
        )
    if failed:
        reasoning = (
            f"{', '.join(failed)} live(s) outside the {vanpool.max_commute_miles:g}-mile commute "
            f"radius of {vanpool.vanpool_id}'s pickup."
        )
    else:
        reasoning = f"All {len(vanpool.riders)} riders live within {vanpool.max_commute_miles:g} miles of the pickup."
    return LocationDecision(
        verdict="fail" if failed else "pass",
        confidence=RULES_CONFIDENCE,
        reasoning=reasoning,
        evidence=evidence,
        failed_employees=failed,
        run=RunInfo(ended_by=EndReason.RULES, strategy="rules"),
    )


def shift_check(
    employees: list[Employee], on: date, vanpool: Vanpool | None = None
) -> ShiftDecision:
    """The rules-only Shift Specialist (the group's majority shift and each overlap)."""
    data = employee_shifts(employees, on, vanpool)
    majority = data["majority_shift"]
    evidence = [
        Evidence(
            source="vanpool_majority_shift",
            ref=vanpool.vanpool_id if vanpool else "group",
            summary=f"Majority shift: {majority['shift_name']} ({majority['shift_id']}).",
            fields={
                "vanpool_id": data["vanpool_id"],
                "majority_shift": majority["shift_name"],
                "shift_id": majority["shift_id"],
            },
        )
    ]
    failed = []
    for e in data["employees"]:
        if not e["meets_rule"]:
            failed.append(e["employee_id"])
        evidence.append(
            Evidence(
                source="employee_shift" if e["meets_rule"] else "shift_mismatch",
                ref=e["employee_id"],
                summary=f"{e['shift_name']} ({e['schedule']}) overlaps the majority shift by {e['overlap_minutes']} min per workday.",
                fields={
                    "employee_id": e["employee_id"],
                    "shift_id": e["shift_id"],
                    "vanpool_id": data["vanpool_id"],
                    "overlap_minutes": e["overlap_minutes"],
                    "on_pto_today": e["on_pto_today"],
                },
            )
        )
    if failed:
        reasoning = (
            f"{', '.join(failed)} overlap(s) the majority {majority['shift_name']} by less than "
            f"{MIN_OVERLAP_MINUTES} minutes per workday."
        )
    else:
        reasoning = f"Every rider overlaps the majority {majority['shift_name']} by at least {MIN_OVERLAP_MINUTES} minutes."
    return ShiftDecision(
        verdict="fail" if failed else "pass",
        confidence=RULES_CONFIDENCE,
        reasoning=reasoning,
        evidence=evidence,
        failed_employees=failed,
        run=RunInfo(ended_by=EndReason.RULES, strategy="rules"),
    )
