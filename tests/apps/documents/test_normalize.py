"""Normalisation and field-level metrics: pure functions, pinned values."""

from __future__ import annotations

import pytest

from casework.apps.documents.normalize import (
    as_amount,
    date_candidates,
    field_scores,
    values_match,
)


@pytest.mark.parametrize(
    ("written", "iso"),
    [
        ("2024-03-12", {"2024-03-12"}),
        ("12/03/2024", {"2024-03-12", "2024-12-03"}),
        ("13/03/2024", {"2024-03-13"}),  # only day-first is a date
        ("03/13/2024", {"2024-03-13"}),  # only month-first is a date
        ("12 March 2024", {"2024-03-12"}),
        ("March 12th, 2024", {"2024-03-12"}),
        ("12.03.24", {"2024-03-12", "2024-12-03"}),
        ("Sept 1 2025", {"2025-09-01"}),
        ("not a date", set()),
        ("31/02/2024", set()),
        ("24 MAR 18", {"2018-03-24"}),  # day, month name, two-digit year (was year 24)
        ("25/FEB/2017", {"2017-02-25"}),
        ("2024 March 5", {"2024-03-05"}),
    ],
)
def test_date_candidates(written: str, iso: set[str]) -> None:
    assert date_candidates(written) == iso


@pytest.mark.parametrize(
    ("written", "amount"),
    [
        ("£1,234.50", 1234.5),
        ("1.234,50 EUR", 1234.5),
        ("$45.10", 45.1),
        (45.1, 45.1),
        ("(12.00)", -12.0),
        ("-3.5", -3.5),
        ("USD 7", 7.0),
        ("RM 29.70", 29.7),  # Malaysian ringgit, as SROIE's keys write it
        ("RM367.10", 367.1),
        ("29.70 MYR", 29.7),
        ("S$ 4.50", 4.5),
        ("₹1,200", 1200.0),
        ("Farm 12", None),  # letters that only contain a code are not a currency
        ("abc", None),
        (True, None),
    ],
)
def test_as_amount(written: object, amount: float | None) -> None:
    assert as_amount(written) == amount


def test_values_match() -> None:
    assert values_match("2024-03-12", "12/03/2024")
    assert not values_match("2024-03-12", "2024-03-13")
    assert values_match(45.1, "£45.10") and not values_match(45.1, "45.01")
    assert values_match("Acme  Supplies LTD", "acme supplies ltd")
    assert not values_match("Acme", None) and values_match(None, None)
    assert values_match([1, "a"], ["1.00", "A"])
    # percentages as numbers: a rate written "21 %" or "14.50%" is the gold "21%" / "14.5%"
    assert values_match("21%", "21 %") and values_match("14.5%", "14.50%")
    assert values_match("7,7%", "7.7%") and not values_match("21%", "12%")
    assert not values_match("21%", "21")
    # commas and full stops count as spaces in text, the way annotators write them either way
    assert values_match(
        "NO. 31G&33G, JALAN SETIA INDAH X ,U13/X", "NO.31G&33G JALAN SETIA INDAH X, U13/X"
    )
    assert values_match("NO 7. SIMPANG OFF BATU", "No 7, Simpang Off Batu")
    assert values_match("SELANGOR D.E.", "Selangor D.E")
    # every other character still counts: a slash, an ampersand, a hyphen, a split word
    assert not values_match("JALAN HARMONI 3/2", "JALAN HARMONI 32")
    assert not values_match("LOT 1851-A & 1851-B", "LOT 1851-A &1851-B")
    assert not values_match("KUALA LUMPUR", "KUALALUMPUR")


def test_field_scores_counts_wrong_values_twice_and_ignores_extras() -> None:
    expected = {
        "gold": {"company": "Acme", "total": 45.1, "date": "2024-03-12", "iban": None, "tax": 2.6}
    }
    output = {
        "fields": {
            "vendor": {"company": "ACME"},
            "total": "45.10",
            "date": "2024-03-13",
            "iban": None,
            "extra": 1,
        }
    }
    scores = field_scores(expected, output)
    assert (scores["tp"], scores["fp"], scores["fn"]) == (2, 1, 2)
    assert scores["exact"] == {
        "company": True,
        "total": True,
        "date": False,
        "iban": True,
        "tax": False,
    }
    assert scores["precision"] == pytest.approx(2 / 3) and scores["recall"] == pytest.approx(0.5)
    assert scores["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
