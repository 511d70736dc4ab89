"""Deterministic vanpool rules: shift overlap. Pure functions, named thresholds. The location
check's geography is in ``geography``, the reply keywords in ``reply_cues``.

Shifts: a shift is one or more weekly *phases* (a rotating shift has several, cycled week by
week), each with work days, one or more time segments (a split shift has two) and a timezone.
Segments that end before they start run overnight. Two shifts are compared on a UTC week
timeline, so overnight, split and cross-timezone shifts need no special cases, and the
majority shift is counted by that UTC schedule (``schedule_key``), so one schedule written
under two names of its zone (``US/Eastern``, ``America/New_York``) is one group. A rider passes
when their shift overlaps the vanpool's majority shift by at least 30 minutes per workday (for
rotating shifts: in at least half of the rotation's weeks). PTO never changes the verdict: the
schedule is what is compared; PTO is reported as evidence.

What people write is read by ``normalize_time`` (``5:20``, ``5:20 PM``, ``17:20:00``) and ``canonical_timezone`` (an alias
such as ``US/Eastern`` -> ``America/New_York``, from the tz database's own links).
"""

from __future__ import annotations

import importlib.resources
import math
import re
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from casework.apps.vanpool.geography import CheckVerdict
from casework.errors import InputError

__all__ = [
    "DAY_NAMES",
    "MIN_OVERLAP_MINUTES",
    "ROTATION_MIN_SHARE",
    "EmployeeOverlap",
    "RiderShift",
    "ScheduleKey",
    "Segment",
    "ShiftCheck",
    "ShiftPhase",
    "canonical_timezone",
    "check_shifts",
    "format_shift",
    "majority_shift",
    "normalize_time",
    "on_pto",
    "overlap_minutes",
    "parse_days",
    "parse_pto",
    "parse_shift",
    "parse_time",
    "schedule_key",
    "shift_overlap",
]

MIN_OVERLAP_MINUTES = 30
"""The spec's rule: overlap >= 30 minutes per workday with the majority shift -> pass."""
ROTATION_MIN_SHARE = 0.5
"""A rotating shift passes when at least this share of its weeks overlap enough."""
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
WEEK_MINUTES = 7 * 24 * 60
# The week whose UTC offsets are used when a caller does not say which date is audited.
REFERENCE_MONDAY = date(2026, 1, 5)


# ---------------------------------------------------------------------------- shifts
@dataclass(frozen=True)
class Segment:
    """Minutes after local midnight; ``end <= start`` means the segment runs overnight."""

    start: int
    end: int

    @property
    def minutes(self) -> int:
        return (self.end - self.start) % (24 * 60) or 24 * 60


@dataclass(frozen=True)
class ShiftPhase:
    """One week of a shift: work days (0 = Monday), segments, timezone."""

    days: tuple[int, ...]
    segments: tuple[Segment, ...]
    timezone: str


def parse_time(text: str) -> int:
    """``HH:MM`` in 24-hour form -> minutes after midnight (``24:00`` allowed as an end)."""
    m = re.fullmatch(r"([01]\d|2[0-4]):([0-5]\d)", text.strip())
    if not m or (m.group(1) == "24" and m.group(2) != "00"):
        raise InputError(f"Time {text!r} is not 24-hour HH:MM (for example 07:00 or 19:30).")
    return int(m.group(1)) * 60 + int(m.group(2))


_CLOCK = re.compile(
    r"(?P<h>\d{1,2}):(?P<m>[0-5]\d)(?::(?P<s>[0-5]\d))?\s*(?:(?P<half>[AaPp])\.?\s*[Mm]\.?)?"
)


def normalize_time(text: str) -> str:
    """A time of day as people and spreadsheets write it -> 24-hour ``HH:MM``: ``5:20`` ->
    ``05:20``, ``5:20 PM`` / ``5:20pm`` / ``5:20 p.m.`` -> ``17:20``, ``12:05 AM`` -> ``00:05``,
    ``17:20:00`` -> ``17:20``. Seconds other than 00 and hours without minutes are refused."""
    m = _CLOCK.fullmatch(text.strip())
    wrong = f"Time {text!r} is not a time of day (write 07:00, 7:00 or 7:00 AM)."
    if not m:
        raise InputError(wrong)
    hour, minute = int(m["h"]), int(m["m"])
    if m["s"] not in (None, "00"):
        raise InputError(
            f"Time {text!r} has seconds; times are to the minute (write {m['h']}:{m['m']})."
        )
    if m["half"]:
        if not 1 <= hour <= 12:
            raise InputError(wrong)
        hour = hour % 12 + (12 if m["half"].lower() == "p" else 0)
    elif hour > 24 or (hour == 24 and minute):
        raise InputError(wrong)
    return f"{hour:02d}:{minute:02d}"


def _day(name: str) -> int:
    key = name.strip()[:3].title()
    if key not in DAY_NAMES:
        raise InputError(f"Day {name!r} is not one of {', '.join(DAY_NAMES)}.")
    return DAY_NAMES.index(key)


def parse_days(text: str) -> tuple[int, ...]:
    """``Mon-Fri``, ``Mon,Wed,Fri``, ``Fri-Mon`` (wraps) or ``Sat-Sun`` -> sorted day numbers."""
    days: set[int] = set()
    for part in text.split(","):
        if not part.strip():
            continue
        if "-" in part:
            first, last = (_day(p) for p in part.split("-", 1))
            d = first
            days.add(d)
            while d != last:
                d = (d + 1) % 7
                days.add(d)
        else:
            days.add(_day(part))
    if not days:
        raise InputError(f"Work days {text!r} name no day (for example Mon-Fri).")
    return tuple(sorted(days))


def _timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a tzdata folder name
        raise InputError(
            f"Timezone {name!r} is unknown (use an IANA name such as America/Los_Angeles)."
        ) from None
    return name


def _tzdata_text() -> str:
    """The tz database's compact source (``tzdata.zi``), where its links are written: from the
    first folder zoneinfo reads zones from, else the ``tzdata`` package."""
    for folder in zoneinfo.TZPATH:
        path = Path(folder) / "tzdata.zi"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    try:
        return (importlib.resources.files("tzdata.zoneinfo") / "tzdata.zi").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return ""


@cache
def _zone_links() -> dict[str, str]:
    """Alias -> the zone it links to (``US/Eastern`` -> ``America/New_York``), lower-cased keys
    with every zone name too, so ``us/eastern`` is found as well."""
    links: dict[str, str] = {}
    for line in _tzdata_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "L":
            links[parts[2]] = parts[1]
    names = {name.lower(): name for name in zoneinfo.available_timezones()}
    out = {}
    for lower, name in names.items():
        target = name
        for _ in range(5):  # links point at zones; follow a chain all the same
            target = links.get(target, target)
        out[lower] = target
    return out


def canonical_timezone(name: str) -> str:
    """The canonical IANA name of a zone as written (``US/Eastern`` -> ``America/New_York``,
    ``america/new_york`` -> ``America/New_York``). Unknown names are refused."""
    text = name.strip()
    found = _zone_links().get(text.lower())
    if found is None:
        _timezone(text)  # a name zoneinfo reads though the list lacks it stays as written
        return text
    return found


def parse_shift(spec: str, timezone: str) -> tuple[ShiftPhase, ...]:
    """Parse a shift written as ``DAYS HH:MM-HH:MM[+HH:MM-HH:MM]``; rotating weeks joined by ``|``.

    ``Mon-Fri 07:00-15:30`` (day), ``Sun-Thu 22:00-06:30`` (overnight),
    ``Mon-Fri 06:00-10:00+15:00-19:00`` (split), ``Mon-Fri 07:00-15:00 | Mon-Fri 19:00-03:00``
    (rotating weekly).
    """
    tz = _timezone(timezone)
    phases = []
    for week in spec.split("|"):
        # Days, then segments; times as normalize_time reads them (7:00 AM-3:30 PM too).
        m = re.fullmatch(r"\s*([A-Za-z][A-Za-z,\s-]*?)\s+(\d.*?)\s*", week)
        if not m:
            raise InputError(
                f"Shift {spec!r} does not parse: write DAYS HH:MM-HH:MM, e.g. 'Mon-Fri 07:00-15:30'."
            )
        segments = []
        for seg in m.group(2).split("+"):
            if seg.count("-") != 1:
                raise InputError(f"Shift segment {seg.strip()!r} is not HH:MM-HH:MM.")
            start, end = (parse_time(normalize_time(t)) for t in seg.split("-"))
            if start == end:
                raise InputError(f"Shift segment {seg.strip()!r} starts and ends at the same time.")
            segments.append(Segment(start, end % (24 * 60)))
        phases.append(ShiftPhase(parse_days(m.group(1).replace(" ", "")), tuple(segments), tz))
    return tuple(phases)


def _fmt(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _fmt_days(days: tuple[int, ...]) -> str:
    if 1 < len(days) < 7:
        for first in days:  # a run of consecutive days, possibly across Sunday (Sun-Thu)
            run = [(first + i) % 7 for i in range(len(days))]
            if sorted(run) == list(days):
                return f"{DAY_NAMES[run[0]]}-{DAY_NAMES[run[-1]]}"
    if len(days) == 7:
        return "Mon-Sun"
    return ",".join(DAY_NAMES[d] for d in days)


def format_shift(phases: Sequence[ShiftPhase]) -> str:
    """The inverse of ``parse_shift`` (canonical spelling)."""
    return " | ".join(
        f"{_fmt_days(p.days)} " + "+".join(f"{_fmt(s.start)}-{_fmt(s.end)}" for s in p.segments)
        for p in phases
    )


def _utc_offset_minutes(tz: str, on: date) -> int:
    offset = datetime.combine(on, time(12), ZoneInfo(tz)).utcoffset() or timedelta(0)
    return int(offset.total_seconds() // 60)


def _week_intervals(phase: ShiftPhase, on: date) -> list[tuple[int, int]]:
    """The phase's work time as UTC minutes of the week, split at the week boundary."""
    offset = _utc_offset_minutes(phase.timezone, on)
    out: list[tuple[int, int]] = []
    for day in phase.days:
        for seg in phase.segments:
            start = (day * 1440 + seg.start - offset) % WEEK_MINUTES
            end = start + seg.minutes
            if end <= WEEK_MINUTES:
                out.append((start, end))
            else:
                out += [(start, WEEK_MINUTES), (0, end - WEEK_MINUTES)]
    return out


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def overlap_minutes(
    employee: ShiftPhase, reference: ShiftPhase, on: date = REFERENCE_MONDAY
) -> int:
    """Minutes per employee workday that the two phases share (weekly overlap / workdays)."""
    total = _overlap(_week_intervals(employee, on), _week_intervals(reference, on))
    return round(total / len(employee.days))


@dataclass(frozen=True)
class ShiftOverlap:
    overlap_minutes: int
    """Mean per-workday overlap over the rotation's weeks."""
    weeks_ok: int
    weeks: int

    @property
    def passes(self) -> bool:
        return (
            self.weeks_ok / self.weeks >= ROTATION_MIN_SHARE
            if self.weeks > 1
            else self.weeks_ok == 1
        )


def shift_overlap(
    employee: Sequence[ShiftPhase], reference: Sequence[ShiftPhase], on: date = REFERENCE_MONDAY
) -> ShiftOverlap:
    """Overlap of two (possibly rotating) shifts, week by week over a full common cycle."""
    weeks = math.lcm(len(employee), len(reference))
    per_week = [
        overlap_minutes(employee[w % len(employee)], reference[w % len(reference)], on)
        for w in range(weeks)
    ]
    ok = sum(m >= MIN_OVERLAP_MINUTES for m in per_week)
    return ShiftOverlap(round(sum(per_week) / weeks), ok, weeks)


def parse_pto(text: str) -> tuple[tuple[date, date], ...]:
    """``2026-11-20..2026-11-27;2026-12-24`` -> date ranges (inclusive)."""
    ranges = []
    for part in re.split(r"[;,]", text or ""):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("..")
        try:
            start = date.fromisoformat(first.strip())
            end = date.fromisoformat(last.strip()) if last else start
        except ValueError:
            raise InputError(f"PTO {part!r} is not YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD.") from None
        if end < start:
            raise InputError(f"PTO {part!r} ends before it starts.")
        ranges.append((start, end))
    return tuple(ranges)


def on_pto(pto: Sequence[tuple[date, date]], day: date) -> bool:
    return any(start <= day <= end for start, end in pto)


# ---------------------------------------------------------------------------- group check
@dataclass(frozen=True)
class RiderShift:
    employee_id: str
    shift_id: str
    shift_name: str
    phases: tuple[ShiftPhase, ...]
    pto: tuple[tuple[date, date], ...] = ()


@dataclass(frozen=True)
class EmployeeOverlap:
    employee_id: str
    shift_id: str
    shift_name: str
    overlap_minutes: int
    passes: bool
    on_pto: bool


@dataclass(frozen=True)
class ShiftCheck:
    majority_shift_id: str
    majority_shift_name: str
    riders: list[EmployeeOverlap] = field(default_factory=list)

    @property
    def failing(self) -> list[EmployeeOverlap]:
        return [r for r in self.riders if not r.passes]

    @property
    def verdict(self) -> CheckVerdict:
        return "fail" if self.failing else "pass"


ScheduleKey = tuple[tuple[tuple[int, int], ...], ...]


def _merged(intervals: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def schedule_key(phases: Sequence[ShiftPhase], on: date = REFERENCE_MONDAY) -> ScheduleKey:
    """A shift's work time on the UTC week of ``on``, phase by phase: the same for one schedule
    however its zone is spelled (``US/Eastern`` or ``America/New_York``) or split."""
    return tuple(_merged(_week_intervals(p, on)) for p in phases)


def majority_shift(
    riders: Sequence[RiderShift], window: ShiftPhase | None = None, on: date = REFERENCE_MONDAY
) -> RiderShift:
    """The most common schedule among riders, counted on the UTC week (``schedule_key``), so
    riders whose shift rows differ only in the zone's spelling count as one group. Ties go to
    the schedule that overlaps the vanpool's service window most (when known), then to the
    lowest shift id; the group is named by its lowest shift id, so the answer is stable."""
    if not riders:
        raise InputError("A shift check needs at least one rider.")
    groups: dict[ScheduleKey, list[RiderShift]] = {}
    for r in riders:
        groups.setdefault(schedule_key(r.phases, on), []).append(r)
    named = {key: min(group, key=lambda r: r.shift_id) for key, group in groups.items()}
    best = max(len(group) for group in groups.values())
    tied = sorted(
        (named[key] for key, group in groups.items() if len(group) == best),
        key=lambda r: r.shift_id,
    )
    if window is not None and len(tied) > 1:
        tied.sort(key=lambda r: -shift_overlap(r.phases, (window,), on).overlap_minutes)
    return tied[0]


def check_shifts(
    riders: Sequence[RiderShift], window: ShiftPhase | None = None, on: date = REFERENCE_MONDAY
) -> ShiftCheck:
    """Every rider's overlap with the group's majority shift; any rider below the rule fails."""
    majority = majority_shift(riders, window, on)
    out = []
    for r in riders:
        ov = shift_overlap(r.phases, majority.phases, on)
        out.append(
            EmployeeOverlap(
                r.employee_id,
                r.shift_id,
                r.shift_name,
                ov.overlap_minutes,
                ov.passes,
                on_pto(r.pto, on),
            )
        )
    return ShiftCheck(majority.shift_id, majority.shift_name, out)
