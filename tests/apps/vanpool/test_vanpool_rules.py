"""Direct tests of the deterministic rules, with pinned numbers."""

from __future__ import annotations

from datetime import date

import pytest

from casework.apps.vanpool.geography import (
    Coordinates,
    GreatCircleDistance,
    check_distance,
    display_miles,
    great_circle_miles,
    normalize_zip,
    zip_coordinates,
)
from casework.apps.vanpool.rules import (
    RiderShift,
    canonical_timezone,
    check_shifts,
    format_shift,
    majority_shift,
    normalize_time,
    on_pto,
    parse_days,
    parse_pto,
    parse_shift,
    parse_time,
    schedule_key,
    shift_overlap,
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
    # The unrounded distance is compared: 50.04 is outside 50 though it reads 50.0 to 0.1 mi.
    assert check_distance(here, here, 50, Fixed(50.04)).verdict == "fail"
    assert check_distance(here, here, 50, Fixed(50.04)).shown_miles == 50.04
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


def test_display_rounds_without_crossing_the_limit() -> None:
    assert display_miles(215.83, 50) == 215.8
    assert display_miles(10.04, 10) == 10.04  # 10.0 would read as inside a 10-mile limit
    assert display_miles(9.96, 10) == 10.0  # inside, and 10.0 is inside too
    assert display_miles(10.0004, 10) == 10.0004


def test_home_10_04_miles_away_fails_a_10_mile_limit() -> None:
    # Saint Paul 55123 (44.805, -93.1367) to Minneapolis 55419 (44.9026, -93.2886), by hand:
    # dlat = 0.0976 deg, dlng = -0.1519 deg; h = sin^2(dlat/2) + cos(44.805) cos(44.9026)
    # sin^2(dlng/2) = 7.2543e-7 + 0.70951 * 0.70831 * 1.7572e-6 = 1.6085e-6;
    # d = 2 * 3958.8 * asin(sqrt(h)) = 10.0416 miles.
    check = check_distance(zip_coordinates("55419"), zip_coordinates("55123"), 10)
    assert check.distance_miles == pytest.approx(10.0416, abs=1e-4)
    assert (check.verdict, check.shown_miles) == ("fail", 10.04)


@pytest.mark.parametrize(
    ("written", "five"),
    [
        ("55075-4634", "55075"),
        ("550754634", "55075"),
        ("1835", "01835"),
        ("501", "00501"),
        ("1835-4634", "01835"),
        (" 02134 ", "02134"),
    ],
)
def test_normalize_zip(written: str, five: str) -> None:
    assert normalize_zip(written) == five


@pytest.mark.parametrize("bad", ["12", "123456", "12345678", "5507-46", "abcde", ""])
def test_normalize_zip_refuses(bad: str) -> None:
    with pytest.raises(InputError, match="is not a US ZIP code"):
        normalize_zip(bad)


@pytest.mark.parametrize(
    ("written", "clock"),
    [
        ("5:20", "05:20"),
        ("05:20", "05:20"),
        ("5:20 PM", "17:20"),
        ("5:20pm", "17:20"),
        ("5:20 p.m.", "17:20"),
        ("12:05 AM", "00:05"),
        ("12:30 PM", "12:30"),
        ("16:45:00", "16:45"),
        ("7:00:00 AM", "07:00"),
        ("24:00", "24:00"),
    ],
)
def test_normalize_time(written: str, clock: str) -> None:
    assert normalize_time(written) == clock


@pytest.mark.parametrize("bad", ["7am", "25:00", "13:00 PM", "0:30 AM", "7:60", "16:45:30", "7.30"])
def test_normalize_time_refuses(bad: str) -> None:
    with pytest.raises(InputError, match="time"):
        normalize_time(bad)


def test_parse_shift_reads_12_hour_and_h_mm_times() -> None:
    assert format_shift(parse_shift("Mon-Fri 7:00 AM-3:30 PM", LA)) == "Mon-Fri 07:00-15:30"
    assert format_shift(parse_shift("Sun-Thu 10:00 PM - 6:30 AM", LA)) == "Sun-Thu 22:00-06:30"
    assert format_shift(parse_shift("Mon, Wed, Fri 7:00-15:30", LA)) == "Mon,Wed,Fri 07:00-15:30"


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("US/Eastern", "America/New_York"),
        ("us/eastern", "America/New_York"),
        ("US/Central", "America/Chicago"),
        ("US/Pacific", "America/Los_Angeles"),
        ("America/New_York", "America/New_York"),
        (" America/Chicago ", "America/Chicago"),
    ],
)
def test_canonical_timezone(written: str, canonical: str) -> None:
    assert canonical_timezone(written) == canonical


@pytest.mark.parametrize("bad", ["Eastern", "Pacific", "GMT-5 Eastern", ""])
def test_canonical_timezone_refuses(bad: str) -> None:
    with pytest.raises(InputError, match="IANA"):
        canonical_timezone(bad)


def test_two_spellings_of_one_zone_are_one_majority_group() -> None:
    # 2 day riders on America/New_York + 2 on US/Eastern (one schedule, two shift rows) against
    # 3 night riders: the day schedule has 4 riders, so the NIGHT riders are the ones flagged.
    day_ny = parse_shift("Mon-Fri 07:00-15:30", "America/New_York")
    day_us = parse_shift("Mon-Fri 07:00-15:30", "US/Eastern")
    night = parse_shift("Sun-Thu 22:00-06:30", "America/New_York")
    riders = [
        RiderShift("EMP-0001", "SH-B", "Day Shift", day_ny),
        RiderShift("EMP-0002", "SH-B", "Day Shift", day_ny),
        RiderShift("EMP-0003", "SH-C", "Days", day_us),
        RiderShift("EMP-0004", "SH-C", "Days", day_us),
        RiderShift("EMP-0005", "SH-A", "Night Shift", night),
        RiderShift("EMP-0006", "SH-A", "Night Shift", night),
        RiderShift("EMP-0007", "SH-A", "Night Shift", night),
    ]
    assert schedule_key(day_ny) == schedule_key(day_us) != schedule_key(night)
    check = check_shifts(riders)
    assert (check.majority_shift_id, check.majority_shift_name) == ("SH-B", "Day Shift")
    assert [r.employee_id for r in check.failing] == ["EMP-0005", "EMP-0006", "EMP-0007"]
    # Day against day: 07:00-15:30 is 510 minutes a workday; night against day: none.
    assert {r.employee_id: r.overlap_minutes for r in check.riders} == {
        "EMP-0001": 510,
        "EMP-0002": 510,
        "EMP-0003": 510,
        "EMP-0004": 510,
        "EMP-0005": 0,
        "EMP-0006": 0,
        "EMP-0007": 0,
    }
