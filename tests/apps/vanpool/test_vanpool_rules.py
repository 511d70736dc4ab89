"""Direct tests of the deterministic rules, with pinned numbers."""

from __future__ import annotations

from datetime import date

import pytest

from casework.apps.vanpool.rules import (
    Coordinates,
    GreatCircleDistance,
    RiderShift,
    check_distance,
    check_shifts,
    format_shift,
    great_circle_miles,
    majority_shift,
    on_pto,
    parse_days,
    parse_pto,
    parse_shift,
    parse_time,
    shift_overlap,
    zip_coordinates,
)
from casework.errors import InputError

LA = "America/Los_Angeles"
DAY = parse_shift("Mon-Fri 07:00-15:30", LA)
NIGHT = parse_shift("Sun-Thu 22:00-06:30", LA)


def test_zip_coordinates_offline() -> None:
    sf = zip_coordinates("94105")
    assert (sf.lat, sf.lng) == (37.7864, -122.3892)


@pytest.mark.parametrize("bad", ["00000", "9410", "abcde"])
def test_unknown_or_malformed_zip(bad: str) -> None:
    with pytest.raises(InputError):
        zip_coordinates(bad)


def test_great_circle_pinned() -> None:
    # San Francisco 94105 to Los Angeles 90026, straight line.
    miles = great_circle_miles(zip_coordinates("94105"), zip_coordinates("90026"))
    assert round(miles, 1) == 344.8
    assert great_circle_miles(Coordinates(0, 0), Coordinates(0, 1)) == pytest.approx(
        69.09, abs=0.01
    )


def test_distance_threshold_is_inclusive_and_per_vanpool() -> None:
    class Fixed:
        name = "fixed"

        def __init__(self, miles: float) -> None:
            self.value = miles

        def miles(self, home: Coordinates, pickup: Coordinates) -> float:
            return self.value

    here = Coordinates(0, 0)
    assert check_distance(here, here, 50, Fixed(50.0)).verdict == "pass"
    assert check_distance(here, here, 50, Fixed(50.04)).verdict == "pass"  # rounds to 50.0
    assert check_distance(here, here, 50, Fixed(50.2)).verdict == "fail"
    assert check_distance(here, here, 30, Fixed(42)).verdict == "fail"
    check = check_distance(
        zip_coordinates("94538"), zip_coordinates("94536"), 50, GreatCircleDistance()
    )
    assert (check.verdict, check.provider) == ("pass", "great_circle")


def test_parse_time_and_days() -> None:
    assert parse_time("07:30") == 450
    assert parse_time("24:00") == 1440
    for bad in ("7:30", "25:00", "07:60", "7am", "24:30"):
        with pytest.raises(InputError):
            parse_time(bad)
    assert parse_days("Mon-Fri") == (0, 1, 2, 3, 4)
    assert parse_days("Fri-Mon") == (0, 4, 5, 6)
    assert parse_days("Mon,Wed,Fri") == (0, 2, 4)
    with pytest.raises(InputError):
        parse_days("Funday")


def test_parse_and_format_round_trip() -> None:
    rot = parse_shift("Mon-Fri 07:00-15:30 | Sun-Thu 22:00-06:30", LA)
    assert len(rot) == 2
    assert format_shift(rot) == "Mon-Fri 07:00-15:30 | Sun-Thu 22:00-06:30"
    split = parse_shift("Mon-Fri 06:00-10:00+14:00-18:00", LA)
    assert format_shift(split) == "Mon-Fri 06:00-10:00+14:00-18:00"
    for bad in ("Mon-Fri", "Mon-Fri 07:00", "Mon-Fri 07:00-07:00", "Mon-Fri 7-15"):
        with pytest.raises(InputError):
            parse_shift(bad, LA)
    with pytest.raises(InputError, match="Timezone"):
        parse_shift("Mon-Fri 07:00-15:00", "Mars/Olympus")


def test_overlap_pinned_values() -> None:
    assert shift_overlap(DAY, DAY).overlap_minutes == 510
    assert shift_overlap(NIGHT, DAY).overlap_minutes == 0
    assert not shift_overlap(NIGHT, DAY).passes
    swing = parse_shift("Mon-Fri 15:00-23:30", LA)
    late = parse_shift("Mon-Fri 15:10-23:40", LA)
    assert (shift_overlap(swing, DAY).overlap_minutes, shift_overlap(swing, DAY).passes) == (
        30,
        True,
    )
    assert (shift_overlap(late, DAY).overlap_minutes, shift_overlap(late, DAY).passes) == (
        20,
        False,
    )
    split = parse_shift("Mon-Fri 06:00-10:00+14:00-18:00", LA)
    assert shift_overlap(split, DAY).overlap_minutes == 270  # 180 morning + 90 afternoon


def test_overnight_shifts_overlap_across_midnight() -> None:
    early_night = parse_shift("Sun-Thu 21:00-05:30", LA)
    assert shift_overlap(early_night, NIGHT).overlap_minutes == 450


def test_timezones_compare_on_utc() -> None:
    # 10:00-18:30 in New York is 07:00-15:30 in Los Angeles.
    east = parse_shift("Mon-Fri 10:00-18:30", "America/New_York")
    assert shift_overlap(east, DAY).overlap_minutes == 510
    # Phoenix keeps standard time: in January it is one hour ahead of Los Angeles.
    phx = parse_shift("Mon-Fri 08:00-16:30", "America/Phoenix")
    assert shift_overlap(phx, DAY, date(2026, 1, 5)).overlap_minutes == 510
    assert shift_overlap(phx, DAY, date(2026, 7, 6)).overlap_minutes == 450


def test_day_sets_matter() -> None:
    weekend = parse_shift("Sat-Sun 07:00-19:00", LA)
    assert shift_overlap(weekend, DAY).overlap_minutes == 0
    compressed = parse_shift("Mon-Thu 06:30-17:00", LA)
    assert shift_overlap(compressed, DAY).overlap_minutes == 510


def test_rotating_shift_needs_half_of_its_weeks() -> None:
    day_night = parse_shift("Mon-Fri 07:00-15:30 | Sun-Thu 22:00-06:30", LA)
    ov = shift_overlap(day_night, DAY)
    assert (ov.overlap_minutes, ov.weeks_ok, ov.weeks, ov.passes) == (255, 1, 2, True)
    night_late = parse_shift("Sun-Thu 22:00-06:30 | Mon-Fri 15:10-23:40", LA)
    ov = shift_overlap(night_late, DAY)
    assert (ov.overlap_minutes, ov.weeks_ok, ov.passes) == (10, 0, False)


def test_pto() -> None:
    pto = parse_pto("2026-11-20..2026-11-27; 2026-12-24")
    assert on_pto(pto, date(2026, 11, 23))
    assert on_pto(pto, date(2026, 12, 24))
    assert not on_pto(pto, date(2026, 12, 1))
    for bad in ("2026-13-01", "2026-11-27..2026-11-20"):
        with pytest.raises(InputError):
            parse_pto(bad)


def _rider(eid: str, sid: str, phases, pto=()) -> RiderShift:
    return RiderShift(eid, sid, sid, phases, pto)


def test_majority_and_group_check() -> None:
    riders = [
        _rider("EMP-0001", "DAY", DAY),
        _rider("EMP-0002", "DAY", DAY),
        _rider("EMP-0003", "NIGHT", NIGHT),
        _rider("EMP-0004", "DAY", DAY, parse_pto("2026-11-20..2026-11-27")),
    ]
    assert majority_shift(riders).shift_id == "DAY"
    check = check_shifts(riders, on=date(2026, 11, 23))
    assert check.verdict == "fail"
    assert [r.employee_id for r in check.failing] == ["EMP-0003"]
    pto_rider = next(r for r in check.riders if r.employee_id == "EMP-0004")
    assert (pto_rider.on_pto, pto_rider.passes) == (True, True)  # PTO never flips the verdict


def test_majority_tie_goes_to_the_service_window() -> None:
    riders = [_rider("EMP-0001", "B-NIGHT", NIGHT), _rider("EMP-0002", "A-DAY", DAY)]
    assert majority_shift(riders).shift_id == "A-DAY"  # lowest id without a window
    window = NIGHT[0]
    assert majority_shift(riders, window).shift_id == "B-NIGHT"
    with pytest.raises(InputError):
        majority_shift([])
