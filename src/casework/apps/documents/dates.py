"""A receipt's date as OCR reads it: the month run into the day or year put apart, a zero read
as a letter put back, and the date a till prints with the sale's time preferred when no label
names the date."""

from __future__ import annotations

import re

from casework.apps.documents.normalize import date_candidates
from casework.apps.documents.patterns import DATE, MONTH_ABBR

__all__ = ["date_digits", "first_date", "month_apart"]


def first_date(lines: list[str]) -> str | None:
    """The first written date that is a real date, on any line (no label said which; the
    lines as ``date_digits`` gives them), as printed; one printed with a time first: a till prints the sale's date so, above it an
    offer's dates ("Mega Bookfair 25 AUG - 3 Sept 2017" / "20/08/17 12:48")."""
    dates = [
        (m.group(0), bool(re.match(r"\s+\d{1,2}:\d\d", line[m.end() :])))
        for line in lines
        for m in re.finditer(DATE, line)
        if date_candidates(month_apart(m.group(0)))
    ]
    return min(dates, key=lambda d: not d[1])[0] if dates else None


def date_digits(line: str) -> str:
    """A date's zero read as U or O ("22/U9/2017")."""
    return re.sub(r"(?<=\b\d\d/)[UO](?=\d/\d{2,4}\b)", "0", line)


def month_apart(raw: str) -> str:
    """OCR runs a month name into the year ("05 Mar2018") or the day ("03Mar2018"), and its
    restored spaces split a year ("25/12/20 18"); the date reader wants them as printed."""
    raw = re.sub(r"(?<=[/.-])(19|20) ?(\d) ?(\d)$", r"\1\2\3", raw.strip())  # "25/12/20 18"
    raw = re.sub(rf"(?<=\d)({MONTH_ABBR})(?=\s?\d)", r" \1", raw)
    return re.sub(rf"(?<=\s)({MONTH_ABBR})(?=\d)", r"\1 ", raw)
