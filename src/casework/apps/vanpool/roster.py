"""Roster files: one row per employee (and their vanpool), as CSV or JSON.

Columns (CSV header, or keys of each JSON object; a JSON file is a list of rows or
``{"rows": [...]}``):

``employee_id`` (EMP-####), ``name``, ``email``, ``home_zip``, ``site``, ``shift_name``,
``shift`` (``Mon-Fri 07:00-15:30``; split ``Mon-Fri 06:00-10:00+15:00-19:00``; rotating weeks
joined by `` | ``), ``timezone`` (IANA), ``pto`` (optional, ``2026-11-20..2026-11-27;…``),
then the vanpool the employee rides in (leave ``vanpool_id`` empty for none): ``vanpool_id``
(VP-###), ``pickup_zip``, ``work_site``, ``departure`` and ``return`` (24-hour HH:MM),
``max_commute_miles`` (optional, default 50). Vanpool columns repeated on several rows must
agree. Home and pickup coordinates come from the ZIP codes (offline).

Every row is checked before anything is written; the first bad row stops the import with one
sentence naming it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from casework.apps.vanpool.models import check_id
from casework.apps.vanpool.repository import VanpoolRepository
from casework.apps.vanpool.rules import (
    DEFAULT_MAX_COMMUTE_MILES,
    format_shift,
    parse_pto,
    parse_shift,
    parse_time,
    zip_coordinates,
)
from casework.errors import InputError

__all__ = ["COLUMNS", "ParsedRoster", "import_roster", "parse_roster", "read_rows", "shift_record"]

COLUMNS = (
    "employee_id",
    "name",
    "email",
    "home_zip",
    "site",
    "shift_name",
    "shift",
    "timezone",
    "pto",
    "vanpool_id",
    "pickup_zip",
    "work_site",
    "departure",
    "return",
    "max_commute_miles",
)
REQUIRED = ("employee_id", "name", "email", "home_zip", "site", "shift_name", "shift", "timezone")
VANPOOL_REQUIRED = ("pickup_zip", "work_site", "departure", "return")


@dataclass
class ParsedRoster:
    shifts: dict[str, dict[str, Any]] = field(default_factory=dict)
    employees: list[dict[str, Any]] = field(default_factory=list)
    vanpools: dict[str, dict[str, Any]] = field(default_factory=dict)
    riders: list[tuple[str, str]] = field(default_factory=list)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a CSV or JSON roster file."""
    if not path.is_file():
        raise InputError(f"Roster file {path} does not exist.")
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}).") from None
        rows = data.get("rows") if isinstance(data, dict) else data
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise InputError(f'{path} must hold a list of row objects or {{"rows": [...]}}.')
        return rows
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path} lacks the column(s) {', '.join(missing)}.")
        return list(reader)
    raise InputError(f"{path} is neither .csv nor .json.")


def shift_record(name: str, spec: str, timezone: str) -> dict[str, Any]:
    """A shift row; its id is derived from the canonical schedule, so equal shifts share one."""
    canonical = format_shift(parse_shift(spec, timezone))
    digest = hashlib.sha1(f"{canonical}|{timezone}".encode()).hexdigest()[:8].upper()
    return {"shift_id": f"SH-{digest}", "name": name, "spec": canonical, "timezone": timezone}


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if isinstance(value, int) and key.endswith("zip"):
        return f"{value:05d}"  # JSON numbers lose a ZIP's leading zero (02134 -> 2134)
    return "" if value is None else str(value).strip()


def parse_roster(rows: list[dict[str, Any]]) -> ParsedRoster:
    out = ParsedRoster()
    seen: set[str] = set()
    for n, row in enumerate(rows, start=1):
        label = f"Row {n}" + (
            f" ({_text(row, 'employee_id')})" if _text(row, "employee_id") else ""
        )
        try:
            _parse_row(row, out, seen)
        except InputError as exc:
            raise InputError(f"{label}: {exc}") from None
    if not out.employees:
        raise InputError("The roster has no rows.")
    return out


def _parse_row(row: dict[str, Any], out: ParsedRoster, seen: set[str]) -> None:
    for key in REQUIRED:
        if not _text(row, key):
            raise InputError(f"the column {key!r} is empty.")
    employee_id = check_id("EMP", _text(row, "employee_id"))
    if employee_id in seen:
        raise InputError(f"{employee_id} appears twice.")
    seen.add(employee_id)
    home = zip_coordinates(_text(row, "home_zip"))
    parse_pto(_text(row, "pto"))
    shift = shift_record(_text(row, "shift_name"), _text(row, "shift"), _text(row, "timezone"))
    known = out.shifts.get(shift["shift_id"])
    if known and known["name"] != shift["name"]:
        shift["name"] = known["name"]  # the same schedule keeps its first name
    out.shifts.setdefault(shift["shift_id"], shift)
    out.employees.append(
        {
            "employee_id": employee_id,
            "name": _text(row, "name"),
            "email": _text(row, "email"),
            "home_zip": _text(row, "home_zip"),
            "home_lat": home.lat,
            "home_lng": home.lng,
            "site": _text(row, "site"),
            "shift_id": shift["shift_id"],
            "pto": _text(row, "pto"),
        }
    )
    if not _text(row, "vanpool_id"):
        return
    vanpool_id = check_id("VP", _text(row, "vanpool_id"))
    for key in VANPOOL_REQUIRED:
        if not _text(row, key):
            raise InputError(f"vanpool {vanpool_id} needs {key!r}.")
    for key in ("departure", "return"):
        parse_time(_text(row, key))
    pickup = zip_coordinates(_text(row, "pickup_zip"))
    miles_text = _text(row, "max_commute_miles")
    try:
        miles = float(miles_text) if miles_text else DEFAULT_MAX_COMMUTE_MILES
    except ValueError:
        raise InputError(f"max_commute_miles {miles_text!r} is not a number.") from None
    if miles <= 0:
        raise InputError(f"max_commute_miles must be positive, not {miles_text}.")
    vanpool = {
        "vanpool_id": vanpool_id,
        "work_site": _text(row, "work_site"),
        "pickup_zip": _text(row, "pickup_zip"),
        "pickup_lat": pickup.lat,
        "pickup_lng": pickup.lng,
        "departure_time": _text(row, "departure"),
        "return_time": _text(row, "return"),
        "timezone": _text(row, "timezone"),
        "max_commute_miles": miles,
    }
    known_vp = out.vanpools.get(vanpool_id)
    if known_vp:
        for key in (
            "work_site",
            "pickup_zip",
            "departure_time",
            "return_time",
            "max_commute_miles",
        ):
            if known_vp[key] != vanpool[key]:
                raise InputError(
                    f"vanpool {vanpool_id} has {key} {vanpool[key]!r} here but {known_vp[key]!r} on an earlier row."
                )
    else:
        out.vanpools[vanpool_id] = vanpool
    out.riders.append((vanpool_id, employee_id))


def import_roster(repo: VanpoolRepository, path: Path, now: datetime) -> dict[str, int]:
    """Validate every row, then write the roster in one transaction."""
    parsed = parse_roster(read_rows(path))
    counts = repo.upsert_roster(
        list(parsed.shifts.values()),
        parsed.employees,
        list(parsed.vanpools.values()),
        parsed.riders,
        now,
    )
    repo.audit(now, "import", "roster_imported", detail={"file": str(path), **counts})
    return counts
