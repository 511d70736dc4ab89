"""Roster files: one row per employee (and their vanpool), as CSV or JSON, as HR systems and
spreadsheets write them.

Columns (CSV header, or keys of each JSON object; a JSON file is a list of rows or
``{"rows": [...]}``; header names are read case- and space-insensitively, other columns are
left alone):

``employee_id`` (EMP-####), ``name``, ``email``, ``home_zip``, ``site``, ``shift_name``,
``shift`` (``Mon-Fri 07:00-15:30``; split ``Mon-Fri 06:00-10:00+15:00-19:00``; rotating weeks
joined by `` | ``), ``timezone`` (IANA), ``pto`` (optional, ``2026-11-20..2026-11-27;…``),
then the vanpool the employee rides in (leave ``vanpool_id`` empty for none): ``vanpool_id``
(VP-###), ``pickup_zip``, ``work_site``, ``departure`` and ``return``, ``max_commute_miles``
(optional, default 50). Vanpool columns repeated on several rows must agree. Home and pickup
coordinates come from the ZIP codes (offline).

Repaired silently: a UTF-8 byte-order mark, CRLF line ends, Windows-1252 text (what Excel
writes as "CSV"), ``;`` as the separator, blank rows (a row of commas), ZIP+4 (the five-digit part), ZIPs whose leading
zeros a spreadsheet dropped, times written ``5:20``, ``5:20 PM`` or ``05:20:00``, time-zone
aliases (``US/Eastern`` -> ``America/New_York``). Left blank on purpose: the e-mail, shift,
shift name, timezone and PTO of an employee who rides no vanpool (no audit reads them).

Every row is checked before anything is written; every problem of every row is reported at
once (``RosterRefused``: row, column, value, what to write instead) and nothing is written.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from casework.apps.vanpool.geography import (
    DEFAULT_MAX_COMMUTE_MILES,
    normalize_zip,
    zip_coordinates,
)
from casework.apps.vanpool.models import ImportReport, RosterRefused, RowProblem, check_id
from casework.apps.vanpool.repository import VanpoolRepository
from casework.apps.vanpool.rules import (
    canonical_timezone,
    format_shift,
    normalize_time,
    parse_pto,
    parse_shift,
)
from casework.errors import InputError

__all__ = [
    "COLUMNS",
    "ParsedRoster",
    "RosterRows",
    "import_roster",
    "parse_roster",
    "read_rows",
    "shift_record",
]

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
"""Columns the header must have."""
EVERY_ROW = ("employee_id", "name", "home_zip", "site")
"""Filled on every row; a rider's row also fills ``RIDER_ROW`` and ``VANPOOL_REQUIRED``."""
RIDER_ROW = ("email", "shift_name", "shift", "timezone")
VANPOOL_REQUIRED = ("pickup_zip", "work_site", "departure", "return")

_ZIP_HINT = "write five digits (01835) or ZIP+4 (01835-4634)"
_FILL = {
    "employee_id": "write the employee's id, e.g. EMP-1001",
    "name": "write the employee's name",
    "home_zip": f"write the employee's home ZIP: {_ZIP_HINT}",
    "site": "write the employee's work site",
    "email": "write the rider's e-mail address (the outreach writes to it)",
    "shift_name": "write the shift's name, e.g. Day Shift",
    "shift": "write the rider's days and hours, e.g. Mon-Fri 07:00-15:30",
    "timezone": "write the shift's IANA timezone, e.g. America/New_York",
    "pickup_zip": f"write the vanpool's pickup ZIP: {_ZIP_HINT}",
    "work_site": "write the vanpool's work site",
    "departure": "write the vanpool's departure time, e.g. 06:15 or 6:15 AM",
    "return": "write the vanpool's return time, e.g. 16:15 or 4:15 PM",
}
"""What to write in a column left blank where it is needed."""

T = TypeVar("T")


@dataclass
class RosterRows:
    """The rows of a roster file with the number a person finds each under: a spreadsheet's
    row (the header is row 1) for CSV, the item's position for JSON. Blank rows left out."""

    source: str
    rows: list[dict[str, Any]]
    numbers: list[int]
    blank: int = 0


@dataclass
class ParsedRoster:
    shifts: dict[str, dict[str, Any]] = field(default_factory=dict)
    employees: list[dict[str, Any]] = field(default_factory=list)
    vanpools: dict[str, dict[str, Any]] = field(default_factory=dict)
    riders: list[tuple[str, str]] = field(default_factory=list)
    repaired: Counter[str] = field(default_factory=Counter)

    def counts(self) -> dict[str, int]:
        return {
            "shifts": len(self.shifts),
            "employees": len(self.employees),
            "vanpools": len(self.vanpools),
            "riders": len(self.riders),
        }


def _column(name: str) -> str:
    """``Home ZIP`` / ``home-zip`` / `` home_zip `` -> ``home_zip``."""
    return "_".join(name.strip().lower().replace("-", " ").split())


def _blank(row: dict[str, Any]) -> bool:
    return all(v is None or str(v).strip() == "" for v in row.values())


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:  # Excel's "CSV (Comma delimited)" is Windows-1252
        return data.decode("cp1252", errors="replace")


def read_rows(path: Path) -> RosterRows:
    """Rows of a CSV or JSON roster file, with their row numbers; blank rows left out."""
    if not path.is_file():
        raise InputError(f"Roster file {path} does not exist.")
    text = _decode(path.read_bytes())
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}).") from None
        items = data.get("rows") if isinstance(data, dict) else data
        if not isinstance(items, list) or not all(isinstance(r, dict) for r in items):
            raise InputError(f'{path} must hold a list of row objects or {{"rows": [...]}}.')
        numbered = [(n, {_column(str(k)): v for k, v in r.items()}) for n, r in enumerate(items, 1)]
    elif path.suffix.lower() == ".csv":
        first = text.split("\n", 1)[0]
        # Excel under a locale whose decimal mark is a comma separates fields with ';'.
        delimiter = ";" if first.count(";") > first.count(",") else ","
        records = list(csv.reader(io.StringIO(text), delimiter=delimiter))
        header = [_column(c) for c in records[0]] if records else []
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise InputError(
                f"{path} lacks the column(s) {', '.join(missing)}; its first row must name "
                f"the columns: {', '.join(COLUMNS)}."
            )
        numbered = [
            (n, {key: value for key, value in zip(header, record, strict=False) if key})
            for n, record in enumerate(records[1:], start=2)
        ]
    else:
        raise InputError(f"{path} is neither .csv nor .json.")
    kept = [(n, r) for n, r in numbered if not _blank(r)]
    return RosterRows(
        source=str(path),
        rows=[r for _, r in kept],
        numbers=[n for n, _ in kept],
        blank=len(numbered) - len(kept),
    )


def shift_record(name: str, spec: str, timezone: str) -> dict[str, Any]:
    """A shift row; its id is derived from the canonical schedule and zone, so equal shifts
    share one (``US/Eastern`` and ``America/New_York`` included)."""
    timezone = canonical_timezone(timezone)
    canonical = format_shift(parse_shift(spec, timezone))
    digest = hashlib.sha1(f"{canonical}|{timezone}".encode()).hexdigest()[:8].upper()
    return {"shift_id": f"SH-{digest}", "name": name, "spec": canonical, "timezone": timezone}


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if isinstance(value, int) and key.endswith("zip"):
        return f"{value:05d}"  # JSON numbers lose a ZIP's leading zero (02134 -> 2134)
    return "" if value is None else str(value).strip()


def _sentence(reason: str, hint: str | None) -> str:
    """The reason, and what to write instead unless the reason says so already."""
    return f"{reason.rstrip('.')}; {hint}." if hint and "write" not in reason else reason


class _Row:
    """One row being read: each column's value, and every problem found in it."""

    def __init__(self, number: int, data: dict[str, Any], problems: list[RowProblem]) -> None:
        self.number = number
        self.data = data
        self.employee_id = _text(data, "employee_id")
        self.problems = problems
        self.refused = False

    def text(self, column: str) -> str:
        return _text(self.data, column)

    def refuse(self, column: str, problem: str) -> None:
        self.problems.append(
            RowProblem(self.number, self.employee_id, column, self.text(column), problem)
        )
        self.refused = True

    def filled(self, column: str) -> bool:
        if self.text(column):
            return True
        self.refuse(column, f"{_FILL[column][0].upper()}{_FILL[column][1:]}.")
        return False

    def read(self, column: str, read: Callable[[str], T], hint: str | None = None) -> T | None:
        try:
            return read(self.text(column))
        except InputError as exc:
            self.refuse(column, _sentence(str(exc), hint))
            return None


def _zip(row: _Row, column: str, repaired: Counter[str]) -> tuple[str, Any] | None:
    """(five digits, coordinates) of a ZIP column, counting what was repaired."""
    code = row.read(column, normalize_zip, _ZIP_HINT)
    if code is None:
        return None
    raw = row.text(column)
    if code != raw:
        repaired["ZIP+4 cut to 5 digits" if len(raw) > 5 else "ZIP zeros restored"] += 1
    coords = row.read(column, lambda _: zip_coordinates(code), "check the number")
    return (code, coords) if coords is not None else None


def _time(row: _Row, column: str, repaired: Counter[str]) -> str | None:
    value = row.read(column, normalize_time)
    if value is not None and value != row.text(column):
        repaired["times to 24-hour"] += 1
    return value


def _miles(text: str) -> float:
    if not text:
        return DEFAULT_MAX_COMMUTE_MILES
    try:
        miles = float(text)
    except ValueError:
        raise InputError(f"{text!r} is not a number of miles.") from None
    if not miles > 0:
        raise InputError(f"{text} miles is not a positive distance.")
    return miles


def _email(text: str) -> str:
    if text and ("@" not in text or " " in text):
        raise InputError(f"{text!r} is not an e-mail address.")
    return text


def parse_roster(rows: RosterRows | list[dict[str, Any]]) -> ParsedRoster:
    """Every row checked; all problems of all rows raised together as ``RosterRefused``."""
    if not isinstance(rows, RosterRows):  # a plain list: items numbered from 1
        rows = RosterRows("The roster", rows, list(range(1, len(rows) + 1)))
    if not rows.rows:
        raise InputError(f"{rows.source} has no rows.")
    out = ParsedRoster()
    problems: list[RowProblem] = []
    seen: dict[str, int] = {}
    vanpool_rows: dict[str, int] = {}
    for number, data in zip(rows.numbers, rows.rows, strict=True):
        _parse_row(_Row(number, data, problems), out, seen, vanpool_rows)
    if problems:
        raise RosterRefused(rows.source, len(rows.rows), problems)
    return out


def _parse_row(
    row: _Row, out: ParsedRoster, seen: dict[str, int], vanpool_rows: dict[str, int]
) -> None:
    for column in EVERY_ROW:
        row.filled(column)
    employee_id = row.read("employee_id", lambda t: check_id("EMP", t)) if row.employee_id else None
    if employee_id in seen:
        row.refuse(
            "employee_id",
            f"{employee_id} is on row {seen[employee_id]} already; write each employee once.",
        )
    elif employee_id:
        seen[employee_id] = row.number
    home = _zip(row, "home_zip", out.repaired) if row.text("home_zip") else None
    rider = bool(row.text("vanpool_id"))
    vanpool_id = row.read("vanpool_id", lambda t: check_id("VP", t)) if rider else None
    if rider:
        for column in RIDER_ROW:
            row.filled(column)
    email = row.read("email", _email, "write an address like name@example.com")
    row.read(
        "pto", parse_pto, "write e.g. 2026-11-23 or 2026-11-20..2026-11-27, several joined by ;"
    )

    shift: dict[str, Any] | None = None
    if row.text("shift"):
        if not rider and not row.text("timezone"):  # a shift given is kept: it needs its zone
            row.refuse(
                "timezone",
                "Write the shift's IANA timezone, e.g. America/New_York, or leave the shift "
                "empty too.",
            )
        zone = row.read("timezone", canonical_timezone) if row.text("timezone") else None
        if zone is not None and zone != row.text("timezone"):
            out.repaired["timezone aliases"] += 1
        # No audit reads a non-rider's shift name: a blank one is named by its schedule.
        name = row.text("shift_name") or (row.text("shift") if not rider else "")
        # Read even when its zone or name is refused, so the shift's own problems are listed.
        shift = row.read(
            "shift",
            lambda t: shift_record(name or t, t, zone or "Etc/UTC"),
            "write days and hours, e.g. Mon-Fri 07:00-15:30 or Mon-Fri 7:00 AM-3:30 PM",
        )
        if shift is not None and shift["spec"] != row.text("shift"):
            out.repaired["shifts to 24-hour"] += 1
        if zone is None or not name:
            shift = None

    vanpool: dict[str, Any] | None = None
    if rider and vanpool_id:
        vanpool = _vanpool(row, vanpool_id, shift, out.repaired)
    if row.refused or employee_id is None or home is None or email is None:
        return
    if vanpool is not None:
        _same_vanpool(row, vanpool, out, vanpool_rows)
        if row.refused:
            return
    if shift is not None:
        known = out.shifts.get(shift["shift_id"])
        if known and known["name"] != shift["name"]:
            shift["name"] = known["name"]  # the same schedule keeps its first name
        out.shifts.setdefault(shift["shift_id"], shift)
    code, coords = home
    out.employees.append(
        {
            "employee_id": employee_id,
            "name": row.text("name"),
            "email": email,
            "home_zip": code,
            "home_lat": coords.lat,
            "home_lng": coords.lng,
            "site": row.text("site"),
            "shift_id": shift["shift_id"] if shift else None,
            "pto": row.text("pto"),
        }
    )
    if vanpool is not None:
        out.riders.append((vanpool["vanpool_id"], employee_id))


def _vanpool(
    row: _Row, vanpool_id: str, shift: dict[str, Any] | None, repaired: Counter[str]
) -> dict[str, Any] | None:
    filled = [row.filled(column) for column in VANPOOL_REQUIRED]
    pickup = _zip(row, "pickup_zip", repaired) if row.text("pickup_zip") else None
    departure = _time(row, "departure", repaired) if row.text("departure") else None
    back = _time(row, "return", repaired) if row.text("return") else None
    miles = row.read(
        "max_commute_miles", _miles, "write the limit in miles, or leave it empty for 50"
    )
    if not all(filled) or pickup is None or departure is None or back is None:
        return None
    if miles is None or shift is None:
        return None
    code, coords = pickup
    return {
        "vanpool_id": vanpool_id,
        "work_site": row.text("work_site"),
        "pickup_zip": code,
        "pickup_lat": coords.lat,
        "pickup_lng": coords.lng,
        "departure_time": departure,
        "return_time": back,
        "timezone": shift["timezone"],
        "max_commute_miles": miles,
    }


_VANPOOL_COLUMNS = {
    "work_site": "work_site",
    "pickup_zip": "pickup_zip",
    "departure_time": "departure",
    "return_time": "return",
    "max_commute_miles": "max_commute_miles",
}


def _same_vanpool(
    row: _Row, vanpool: dict[str, Any], out: ParsedRoster, vanpool_rows: dict[str, int]
) -> None:
    """A vanpool's columns agree on every row that names it (compared as read: 6:15 = 06:15)."""
    vanpool_id = vanpool["vanpool_id"]
    known = out.vanpools.get(vanpool_id)
    if known is None:
        out.vanpools[vanpool_id] = vanpool
        vanpool_rows[vanpool_id] = row.number
        return
    for key, column in _VANPOOL_COLUMNS.items():
        if known[key] != vanpool[key]:
            row.refuse(
                column,
                f"{vanpool_id} has {known[key]!r} there on row {vanpool_rows[vanpool_id]}; "
                "write the same value on every row of a vanpool.",
            )


def import_roster(
    repo: VanpoolRepository, path: Path, now: datetime, *, dry_run: bool = False
) -> ImportReport:
    """Validate every row, then write the roster in one transaction (``dry_run``: check the
    file against the store and write nothing)."""
    rows = read_rows(path)
    parsed = parse_roster(rows)
    added = repo.upsert_roster(
        list(parsed.shifts.values()),
        parsed.employees,
        list(parsed.vanpools.values()),
        parsed.riders,
        now,
        dry_run=dry_run,
    )
    if not dry_run:
        repo.audit(now, "import", "roster_imported", detail={"file": str(path), **added})
    return ImportReport(
        file=str(path),
        dry_run=dry_run,
        rows=len(rows.rows),
        blank_rows=rows.blank,
        in_file=parsed.counts(),
        added=added,
        repaired=dict(sorted(parsed.repaired.items())),
    )
