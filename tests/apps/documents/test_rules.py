from __future__ import annotations

import pytest

from casework.apps.documents import rules
from casework.errors import InputError


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("items[2].price", ["items", "2", "price"]),
        ("document.title", ["document", "title"]),
        ("total", ["total"]),
        ("a[0][1]", ["a", "0", "1"]),
        ("line_items[10].unit-price", ["line_items", "10", "unit-price"]),
    ],
)
def test_parse_json_path(path: str, expected: list[str]) -> None:
    assert rules.parse_json_path(path) == expected


def test_parse_path_keeps_indexes_typed() -> None:
    assert rules.parse_path("items[2].price") == ["items", 2, "price"]
    assert rules.sqlite_json_path(["items", 2, "price"]) == '$."items"[2]."price"'


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("", "empty"),
        ("a..b", "extra '.'"),
        (".a", "extra '.'"),
        ("a.", "ends with '.'"),
        ("a[x]", "whole number"),
        ("a[-1]", "whole number"),
        ("a[1", "unclosed"),
        ("a]", "unmatched"),
        ("[0]", "no field before"),
        ("a'; DROP TABLE x; --", "not allowed"),
        ("$.a", "not allowed"),
        ("a.{b,c}", "not allowed"),
        ("a.b.c.d.e.f.g.h.i", "deeper than 8"),
        ("a[99999]", "larger than"),
        ("a[0]b", "needs a '.'"),
    ],
)
def test_bad_paths_are_one_sentence(path: str, words: str) -> None:
    with pytest.raises(InputError) as err:
        rules.parse_path(path)
    msg = str(err.value)
    assert words in msg and msg.count("\n") == 0


def test_check_path_refuses_what_the_databases_would_treat_differently() -> None:
    doc = {"vendor": {"name": "Acme"}, "items": [{"price": 1}], "total": 3}
    rules.check_path(doc, ["vendor", "city"], must_exist=False)  # a new key: fine
    rules.check_path(doc, ["items", 1], must_exist=False)  # append at the end: fine
    with pytest.raises(InputError, match="no field 'buyer'"):
        rules.check_path(doc, ["buyer", "name"], must_exist=False)
    with pytest.raises(InputError, match="index \\[5\\] is out of range"):
        rules.check_path(doc, ["items", 5, "price"], must_exist=False)
    with pytest.raises(InputError, match="'total' is not an object"):
        rules.check_path(doc, ["total", "x"], must_exist=False)
    with pytest.raises(InputError, match=r"no field 'vendor\.city'"):
        rules.check_path(doc, ["vendor", "city"], must_exist=True)


def test_validate_extraction_pins_every_error() -> None:
    assert rules.validate_extraction({"total": 45.1}, {"total": 0.9}) == []
    assert rules.validate_extraction({}, {}) == [
        "fields is empty; extract at least one field that is in the document"
    ]
    assert rules.validate_extraction({"total": 1}, {"total": 1.5}) == [
        "confidence for 'total' must be 0.0-1.0, got 1.5"
    ]
    assert rules.validate_extraction({"total": 1}, {"total": "high"}) == [
        "confidence for 'total' must be a number 0.0-1.0, got 'high'"
    ]
    assert rules.validate_extraction({"total": 1}, {}) == ["no confidence for 'total'"]
    assert rules.validate_extraction({"a": 1}, {"a": 0.5, "b": 0.5}) == [
        "confidence given for 'b', which is not a field"
    ]
    assert rules.validate_extraction([1], {}) == [
        "fields must be an object of name -> value, got list"
    ]
    nested = {"vendor": {"name": "Acme", "city": "Leeds"}}
    assert rules.validate_extraction(nested, {"vendor": {"name": 0.9, "city": 0.7}}) == []
    assert rules.validate_extraction(nested, {"vendor": {"zip": 0.9}}) == [
        "confidence given for 'vendor.zip', which is not a field"
    ]


def test_validate_extraction_custom_mode() -> None:
    req = ["company", "total"]
    assert (
        rules.validate_extraction(
            {"company": "Acme", "total": None}, {"company": 0.9, "total": 0.1}, requested=req
        )
        == []
    )
    assert rules.validate_extraction(
        {"company": "Acme", "total": None}, {"company": 0.9, "total": 0.5}, requested=req
    ) == ["'total' is null, so its confidence must be <= 0.2, got 0.5"]
    errors = rules.validate_extraction(
        {"company": "Acme", "date": "x"}, {"company": 0.9, "date": 0.9}, requested=req
    )
    assert errors == [
        "missing requested fields: total (use null with confidence <= 0.2 when the document lacks one)",
        "fields not requested: date; extract exactly: company, total",
    ]


def test_spread_confidence_moves_a_whole_score_down() -> None:
    fields = {"vendor": {"name": "Acme", "city": "Leeds"}, "total": 3}
    assert rules.spread_confidence(fields, {"vendor": 0.8, "total": 0.9}, ["vendor", "name"]) == {
        "vendor": {"name": 0.8, "city": 0.8},
        "total": 0.9,
    }
    assert rules.spread_confidence(fields, {"vendor": {"name": 0.8}}, ["vendor", "name"]) is None
    assert rules.spread_confidence(fields, {"total": 0.9}, ["total"]) is None


def test_mean_confidence() -> None:
    assert rules.mean_confidence({"a": 0.5, "b": {"c": 1.0, "d": [0.0]}}) == pytest.approx(0.5)
    assert rules.mean_confidence({}) == 0.0


def test_nest_dotted_reads_dotted_names_as_paths() -> None:
    assert rules.nest_dotted({"vendor.name": "Acme", "vendor.city": "Leeds", "total": 3}) == {
        "vendor": {"name": "Acme", "city": "Leeds"},
        "total": 3,
    }
    assert rules.nest_dotted({"a.b.c": 0.9}) == {"a": {"b": {"c": 0.9}}}
    # collisions and empty segments come back as given, for validate_extraction to refuse
    clash = {"vendor": "Acme", "vendor.name": "Acme"}
    assert rules.nest_dotted(clash) is clash
    assert rules.nest_dotted({"vendor.name": 1, "vendor": 2}) == {"vendor.name": 1, "vendor": 2}
    assert rules.nest_dotted({"a..b": 1}) == {"a..b": 1}
    assert rules.nest_dotted([1]) == [1]
    plain = {"total": 1}
    assert rules.nest_dotted(plain) is plain


def test_tidy_extraction_args_moves_misplaced_scores_out_of_fields() -> None:
    # invoice-36 of the eval set: the bundled model put null score keys among the fields
    fields = {"total": 3139.25, "confidences": None, "confidence": None}
    assert rules.tidy_extraction_args(fields, {"total": 1.0}) == (
        {"total": 3139.25},
        {"total": 1.0},
    )
    # scores nested in fields, none given beside them
    assert rules.tidy_extraction_args(
        {"vendor.name": "Acme", "confidences": {"vendor.name": 0.9}}, {}
    ) == ({"vendor": {"name": "Acme"}}, {"vendor": {"name": 0.9}})
    # a real field that happens to be called confidence stays (a number, not a score map)
    assert rules.tidy_extraction_args({"confidence": 3}, {"confidence": 0.9}) == (
        {"confidence": 3},
        {"confidence": 0.9},
    )
