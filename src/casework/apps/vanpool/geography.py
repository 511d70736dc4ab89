"""Where riders live and how far they commute: a home ZIP gives coordinates (``zipcodes``,
offline); the commute is the distance from home to the vanpool's pickup, measured by a
``DistanceProvider`` (great-circle by default; a routing service plugs in behind the same
protocol). A rider passes when the distance is within the vanpool's threshold (default 50
miles), compared unrounded (a home 10.04 miles away fails a 10-mile limit); ``display_miles``
rounds it for people without moving it across the limit. ``normalize_zip`` reads what people
write (ZIP+4, a leading zero a spreadsheet dropped).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Literal, Protocol

import zipcodes

from casework.errors import InputError

__all__ = [
    "DEFAULT_MAX_COMMUTE_MILES",
    "EARTH_RADIUS_MILES",
    "CheckVerdict",
    "Coordinates",
    "DistanceCheck",
    "DistanceProvider",
    "GreatCircleDistance",
    "check_distance",
    "display_miles",
    "great_circle_miles",
    "normalize_zip",
    "zip_coordinates",
]

CheckVerdict = Literal["pass", "fail"]

DEFAULT_MAX_COMMUTE_MILES = 50.0
"""A rider whose home is farther than this from the pickup fails the location check."""
EARTH_RADIUS_MILES = 3958.8


@dataclass(frozen=True)
class Coordinates:
    lat: float
    lng: float


def normalize_zip(text: str) -> str:
    """A ZIP as HR exports and spreadsheets write it -> its five digits: ZIP+4 (``55075-4634``,
    ``550754634``) keeps the five-digit part; a 3-4 digit ZIP gets back the leading zeros a
    spreadsheet dropped (``1835`` -> ``01835``, ``1835-4634`` -> ``01835``)."""
    code = text.strip()
    m = (
        re.fullmatch(r"(\d{5})(?:\d{4})?", code)
        or re.fullmatch(r"(\d{3,5})\s*-\s*\d{4}", code)
        or re.fullmatch(r"(\d{3,4})", code)
    )
    if not m:
        raise InputError(f"ZIP code {text!r} is not a US ZIP code.")
    return m.group(1).zfill(5)


@cache
def zip_coordinates(zip_code: str) -> Coordinates:
    """Coordinates of a US ZIP code's centre, offline. Unknown ZIP -> ``InputError``."""
    code = zip_code.strip()
    if not re.fullmatch(r"\d{5}", code):
        raise InputError(f"ZIP code {zip_code!r} is not five digits.")
    matches = zipcodes.matching(code)
    if not matches:
        raise InputError(f"ZIP code {code} does not exist.")
    return Coordinates(float(matches[0]["lat"]), float(matches[0]["long"]))


def great_circle_miles(a: Coordinates, b: Coordinates) -> float:
    """Haversine distance in statute miles."""
    lat1, lat2 = math.radians(a.lat), math.radians(b.lat)
    dlat = lat2 - lat1
    dlng = math.radians(b.lng - a.lng)
    h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlng / 2) ** 2
    return 2 * EARTH_RADIUS_MILES * math.asin(math.sqrt(h))


class DistanceProvider(Protocol):
    """Commute distance from home to pickup; a routing service implements the same method."""

    name: str

    def miles(self, home: Coordinates, pickup: Coordinates) -> float: ...


class GreatCircleDistance:
    """The offline provider: straight-line distance (a lower bound of the road distance)."""

    name = "great_circle"

    def miles(self, home: Coordinates, pickup: Coordinates) -> float:
        return great_circle_miles(home, pickup)


@dataclass(frozen=True)
class DistanceCheck:
    distance_miles: float
    """Unrounded: the verdict compares this with the threshold (``display_miles`` for people)."""
    threshold_miles: float
    provider: str

    @property
    def verdict(self) -> CheckVerdict:
        return "pass" if self.distance_miles <= self.threshold_miles else "fail"

    @property
    def shown_miles(self) -> float:
        return display_miles(self.distance_miles, self.threshold_miles)


def check_distance(
    home: Coordinates,
    pickup: Coordinates,
    threshold_miles: float = DEFAULT_MAX_COMMUTE_MILES,
    provider: DistanceProvider | None = None,
) -> DistanceCheck:
    provider = provider or GreatCircleDistance()
    return DistanceCheck(provider.miles(home, pickup), threshold_miles, provider.name)


def display_miles(miles: float, threshold: float) -> float:
    """``miles`` to 0.1 for people, with more decimals when 0.1 would show it on the other side
    of the threshold (10.04 against a 10-mile limit shows 10.04, never a failing 10.0)."""
    for digits in range(1, 7):
        shown = round(miles, digits)
        if (shown <= threshold) == (miles <= threshold):
            return shown
    return miles
