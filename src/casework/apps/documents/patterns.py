"""Text patterns the documents rules share: dates as receipts and invoices print them, and
the legal forms a company name ends with, and the edit distance OCR's misread words are
measured by."""

from __future__ import annotations

__all__ = ["DATE", "LEGAL_FORMS", "MONTH_ABBR", "edit_distance"]

MONTH_ABBR = r"(?i:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)"
DATE = (
    # one separator throughout ("MI11/3-21" is a code, not a date); "25/FEB/2017", "24 MAR 18"
    # OCR's restored spaces can split the year ("25/12/20 18", "07/05/201 8", not a time:
    # "25/12/20 18:30")
    r"(?<![\w/.-])(?:\d{1,2}/\d{1,2}/|\d{1,2}\.\d{1,2}\.|\d{1,2}-\d{1,2}-)"
    r"(?:(?:19|20) \d{2}(?![\d:])|(?:19|20)\d \d(?![\d:])|\d{2,4})"
    # "03Mar2018": OCR runs the day, month and year together, and the time ("Mar201818:19")
    rf"|(?<![\w/.-])\d{{1,2}}(?:/{MONTH_ABBR}/|-{MONTH_ABBR}-| ?{MONTH_ABBR} ?)"
    r"(?:(?:19|20) \d{2}(?![\d:])|\d{2}(?:\d{2})?(?:\b|(?=\d{1,2}:\d\d)))"
    # the year first: "2018-02-22", "2018/02/22"
    r"|\d{4}-\d{2}-\d{2}|(?<![\d/])\d{4}/\d{2}/\d{2}(?![\d/])"
    # "7. Mai 2014" (German), "29 maart 2014", "August 3 , 2014" as a text layer spaces it
    r"|\d{1,2}(?:st|nd|rd|th|\.)?\s+[A-Za-zÀ-ÿ]{3,9}\.?,?\s+\d{4}"
    r"|[A-Za-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?\s?,?\s+\d{4}"
)
LEGAL_FORMS = r"sdn\.?\s*bhd|s/b|bhd|ltd|limited|llc|llp|inc|gmbh|sarl|plc|pty|corp(?:oration)?"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, for words of a dozen letters."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]
