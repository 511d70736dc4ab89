"""The synthetic roster: sites, shifts, invented names, real ZIP codes, and the vanpools the
generator plants a scenario in (a rider moved 300 miles away, a night worker put in a day
vanpool), with the truth of what it planted. Deterministic (fixed seed); ``synth`` writes it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import zipcodes

from casework.apps.vanpool.geography import Coordinates, great_circle_miles

__all__ = ["HAND_OVERLAP", "SEED", "SHIFTS", "SITES", "generate"]

SEED = 1001


@dataclass(frozen=True)
class Site:
    name: str
    zip: str
    state: str
    timezone: str


SITES = (
    Site("Fremont Plant", "94538", "CA", "America/Los_Angeles"),
    Site("Phoenix Hub", "85034", "AZ", "America/Phoenix"),
    Site("Austin Campus", "78744", "TX", "America/Chicago"),
    Site("Reno Works", "89434", "NV", "America/Los_Angeles"),
    Site("Buffalo Works", "14218", "NY", "America/New_York"),
)

# kind -> (name, schedule). Compatible with DAY: EARLY, FLEX, COMPRESSED, SPLIT, BOUNDARY (30 min).
SHIFTS = {
    "DAY": ("Day Shift", "Mon-Fri 07:00-15:30"),
    "EARLY": ("Early Day", "Mon-Fri 06:00-14:30"),
    "FLEX": ("Flexible Day", "Mon-Fri 09:00-17:30"),
    "COMPRESSED": ("4x10 Day", "Mon-Thu 06:30-17:00"),
    "SPLIT": ("Split Shift", "Mon-Fri 06:00-10:00+14:00-18:00"),
    "SWING": ("Swing Shift", "Mon-Fri 15:00-23:30"),
    "LATE_SWING": ("Late Swing", "Mon-Fri 15:10-23:40"),
    "NIGHT": ("Night Shift", "Sun-Thu 22:00-06:30"),
    "NIGHT_EARLY": ("Early Night", "Sun-Thu 21:00-05:30"),
    "WEEKEND": ("Weekend Day", "Sat-Sun 07:00-19:00"),
    "ROTATING": ("Rotating Day/Night", "Mon-Fri 07:00-15:30 | Sun-Thu 22:00-06:30"),
    "ROTATING_NIGHT": ("Rotating Night/Late Swing", "Sun-Thu 22:00-06:30 | Mon-Fri 15:10-23:40"),
    "PANAMA": ("Panama 2-2-3", "Mon,Tue,Fri,Sat,Sun 07:00-19:00 | Wed,Thu 07:00-19:00"),
}
# Overlap (minutes per workday) the generator's author computed by hand for the planted pairs.
HAND_OVERLAP = {
    ("NIGHT", "DAY"): 0,
    ("WEEKEND", "DAY"): 0,
    ("SWING", "DAY"): 30,
    ("LATE_SWING", "DAY"): 20,
    ("DAY", "NIGHT"): 0,
    ("DAY", "SWING"): 30,
    ("EARLY", "DAY"): 450,
    ("FLEX", "DAY"): 390,
    ("SPLIT", "DAY"): 270,
    ("COMPRESSED", "DAY"): 510,
    ("NIGHT_EARLY", "NIGHT"): 450,
    ("ROTATING", "DAY"): 255,
    ("ROTATING_NIGHT", "DAY"): 10,
    ("FLEX", "NIGHT"): 0,
    ("DAY", "DAY"): 510,
    ("NIGHT", "NIGHT"): 510,
}

FIRST = [
    "Ana",
    "Ben",
    "Carla",
    "Dev",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jamal",
    "Kira",
    "Luis",
    "Maya",
    "Nikhil",
    "Olga",
    "Pedro",
    "Quinn",
    "Rosa",
    "Sami",
    "Tara",
    "Umar",
    "Vera",
    "Wen",
    "Xena",
    "Yusuf",
    "Zoe",
    "Aiko",
    "Bruno",
    "Chidi",
    "Dana",
    "Emeka",
    "Fatima",
    "Gus",
    "Hana",
    "Ivan",
    "Jade",
    "Kofi",
    "Lena",
    "Mateo",
    "Nora",
]
LAST = [
    "Alvarez",
    "Brooks",
    "Chen",
    "Diaz",
    "Evans",
    "Fischer",
    "Garcia",
    "Huang",
    "Ibrahim",
    "Jensen",
    "Kim",
    "Lopez",
    "Moreno",
    "Nguyen",
    "Okafor",
    "Patel",
    "Quintero",
    "Rossi",
    "Singh",
    "Tanaka",
    "Usman",
    "Vargas",
    "Walsh",
    "Xu",
    "Yilmaz",
    "Zhang",
]


def _zips_by_distance(site: Site) -> list[tuple[float, str]]:
    centre = _coords(site.zip)
    out = []
    for z in zipcodes.filter_by(state=site.state):
        if z["zip_code_type"] != "STANDARD" or not z["active"]:
            continue
        c = Coordinates(float(z["lat"]), float(z["long"]))
        out.append((great_circle_miles(centre, c), z["zip_code"]))
    return sorted(out)


def _coords(zip_code: str) -> Coordinates:
    z = zipcodes.matching(zip_code)[0]
    return Coordinates(float(z["lat"]), float(z["long"]))


def _zip_at(rng: random.Random, pickup: str, state_zips: list[str], lo: float, hi: float) -> str:
    centre = _coords(pickup)
    pool = [z for z in state_zips if lo <= great_circle_miles(centre, _coords(z)) <= hi]
    if not pool:
        raise RuntimeError(f"no ZIP {lo}-{hi} miles from {pickup}")
    return rng.choice(sorted(pool))


# Vanpool scenarios: (scenario, majority kind, planted riders as (kind, distance band)).
# Distance bands: "near" 0-15 mi, "edge_in" 40-48 mi, "edge_out" 53-70 mi, "far" 150-400 mi.
SCENARIOS: list[tuple[str, str, list[tuple[str, str]]]] = [
    *[("clean", "DAY", [("EARLY", "near")])] * 6,
    *[("clean", "DAY", [("FLEX", "near"), ("COMPRESSED", "near")])] * 4,
    *[("clean", "DAY", [("SPLIT", "near")])] * 3,
    *[("clean", "NIGHT", [("NIGHT_EARLY", "near")])] * 3,
    *[("clean", "SWING", [])] * 2,
    ("location_mismatch", "DAY", [("DAY", "far")]),
    ("location_mismatch", "DAY", [("EARLY", "far")]),
    ("location_mismatch", "NIGHT", [("NIGHT", "far")]),
    ("location_mismatch", "SWING", [("SWING", "far")]),
    ("shift_mismatch", "DAY", [("NIGHT", "near")]),
    ("shift_mismatch", "DAY", [("WEEKEND", "near")]),
    ("shift_mismatch", "NIGHT", [("DAY", "near")]),
    ("shift_mismatch", "DAY", [("ROTATING_NIGHT", "near")]),
    ("both_mismatch", "DAY", [("NIGHT", "far")]),
    ("both_mismatch", "DAY", [("NIGHT", "near"), ("DAY", "far")]),
    ("both_mismatch", "NIGHT", [("DAY", "far")]),
    ("edge_distance_inside", "DAY", [("DAY", "edge_in")]),
    ("edge_distance_inside", "DAY", [("EARLY", "edge_in")]),
    ("edge_distance_outside", "DAY", [("DAY", "edge_out")]),
    ("edge_distance_outside", "SWING", [("SWING", "edge_out")]),
    ("edge_custom_threshold", "DAY", [("DAY", "edge_in")]),
    ("edge_boundary_overlap", "DAY", [("SWING", "near")]),
    ("edge_partial_overlap", "DAY", [("LATE_SWING", "near")]),
    ("edge_pto", "DAY", [("DAY", "near")]),
    ("edge_rotating", "DAY", [("ROTATING", "near")]),
]
BANDS = {
    "near": (0.0, 15.0),
    "edge_in": (40.0, 48.0),
    "edge_out": (53.0, 70.0),
    "far": (150.0, 400.0),
}
COMPATIBLE = {
    "EARLY",
    "FLEX",
    "COMPRESSED",
    "SPLIT",
    "NIGHT_EARLY",
    "ROTATING",
    "DAY",
    "NIGHT",
    "SWING",
}


_NO_VANPOOL = ("vanpool_id", "pickup_zip", "work_site", "departure", "return", "max_commute_miles")
_DEPARTURES = {"DAY": ("06:15", "16:15"), "NIGHT": ("21:15", "07:15"), "SWING": ("14:15", "00:15")}
# Employees in no vanpool, to reach 300 and to give the shift dataset more people.
_EXTRA_KINDS = [
    "DAY",
    "EARLY",
    "FLEX",
    "NIGHT",
    "SWING",
    "SPLIT",
    "ROTATING",
    "PANAMA",
    "WEEKEND",
    "LATE_SWING",
    "COMPRESSED",
    "NIGHT_EARLY",
]


class _Roster:
    """The rows written so far and the one random stream every draw comes from, in order."""

    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.by_site = {s.name: _zips_by_distance(s) for s in SITES}
        self.rows: list[dict[str, Any]] = []
        self.kinds: dict[str, str] = {}
        self.emp_no = iter(range(1001, 9999))

    def person(
        self, site: Site, kind: str, home_zip: str, vanpool: dict[str, Any] | None, pto: str = ""
    ) -> dict[str, Any]:
        eid = f"EMP-{next(self.emp_no)}"
        first, last = self.rng.choice(FIRST), self.rng.choice(LAST)
        name, sched = SHIFTS[kind]
        self.kinds[eid] = kind
        row = {
            "employee_id": eid,
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}.{eid[4:]}@example.com",
            "home_zip": home_zip,
            "site": site.name,
            "shift_name": name,
            "shift": sched,
            "timezone": site.timezone,
            "pto": pto,
        }
        row.update(vanpool or {k: "" for k in _NO_VANPOOL})
        self.rows.append(row)
        return row


def generate() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """(roster rows, injected truth per vanpool, shift kind per employee)."""
    roster = _Roster()
    truth = [
        _vanpool(roster, i, scenario, majority, planted)
        for i, (scenario, majority, planted) in enumerate(SCENARIOS)
    ]
    j = 0
    while len(roster.rows) < 300:
        site = SITES[j % len(SITES)]
        near = [z for d, z in roster.by_site[site.name] if d <= 20]
        roster.person(site, _EXTRA_KINDS[j % len(_EXTRA_KINDS)], roster.rng.choice(near), None)
        j += 1
    return roster.rows, truth, roster.kinds


def _vanpool(
    roster: _Roster, i: int, scenario: str, majority: str, planted: list[tuple[str, str]]
) -> dict[str, Any]:
    """The ``i``-th vanpool: its majority, its planted riders, and the truth of what was planted."""
    rng = roster.rng
    site = SITES[i % len(SITES)]
    near_site = [z for d, z in roster.by_site[site.name] if 3 <= d <= 25]
    state_zips = [z for d, z in roster.by_site[site.name] if d <= 480]
    pickup = rng.choice(near_site)
    dep, ret = _DEPARTURES[majority]
    vanpool_id = f"VP-{101 + i}"
    threshold = 30.0 if scenario == "edge_custom_threshold" else 50.0
    vp = {
        "vanpool_id": vanpool_id,
        "pickup_zip": pickup,
        "work_site": site.name,
        "departure": dep,
        "return": ret,
        "max_commute_miles": threshold,
    }
    n_majority = rng.randint(4, 6)
    for _ in range(n_majority):
        roster.person(site, majority, _zip_at(rng, pickup, state_zips, *BANDS["near"]), vp)
    failing: dict[str, list[str]] = {"location": [], "shift": []}
    planted_ids = []
    for kind, band in planted:
        pto = "2026-11-16..2026-11-30" if scenario == "edge_pto" else ""
        if band == "far":
            zip_code = _far_zip(rng, site, pickup)
        else:
            zip_code = _zip_at(rng, pickup, state_zips, *BANDS[band])
        row = roster.person(site, kind, zip_code, vp, pto)
        planted_ids.append(row["employee_id"])
        if band == "far" or band == "edge_out" or (scenario == "edge_custom_threshold"):
            failing["location"].append(row["employee_id"])
        if not _compatible(kind, majority):
            failing["shift"].append(row["employee_id"])
    return {
        "vanpool_id": vanpool_id,
        "scenario": scenario,
        "site": site.name,
        "majority_kind": majority,
        "planted": planted_ids,
        "expected": {
            "location": "fail" if failing["location"] else "pass",
            "shift": "fail" if failing["shift"] else "pass",
            "failed_checks": [c for c in ("location", "shift") if failing[c]],
            "failing_employees": failing,
        },
    }


def _compatible(kind: str, majority: str) -> bool:
    """The author's planted truth (written down, not computed): which kinds fit which vanpool."""
    if majority == "DAY":
        return kind in {"DAY", "EARLY", "FLEX", "COMPRESSED", "SPLIT", "SWING", "ROTATING"}
    if majority == "NIGHT":
        return kind in {"NIGHT", "NIGHT_EARLY"}
    return kind in {"SWING"}


def _far_zip(rng: random.Random, site: Site, pickup: str) -> str:
    centre = _coords(pickup)
    pool = []
    for z in zipcodes.filter_by(state=site.state):
        if z["zip_code_type"] != "STANDARD" or not z["active"]:
            continue
        d = great_circle_miles(centre, Coordinates(float(z["lat"]), float(z["long"])))
        if BANDS["far"][0] <= d <= BANDS["far"][1]:
            pool.append(z["zip_code"])
    if not pool:  # small states: a ZIP in a neighbouring big state
        for z in zipcodes.filter_by(state="CA"):
            d = great_circle_miles(centre, Coordinates(float(z["lat"]), float(z["long"])))
            if d >= BANDS["far"][0] and z["zip_code_type"] == "STANDARD":
                pool.append(z["zip_code"])
    return rng.choice(sorted(pool))
