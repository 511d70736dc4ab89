"""Domain metrics as pure functions, the datasets, and the benchmark reader."""

from __future__ import annotations

import json
import sqlite3

import pytest

from casework.apps.sql.benchmark import DATA_DIR, gold_and_predicted, read_benchmark
from casework.apps.sql.evalsuite import INTEGRITY, QUESTIONS
from casework.apps.sql.metrics import (
    component_match,
    exact_match,
    execution_match,
    integrity_case,
    judge_agrees,
    result_sets_equal,
    table_recall,
    validity,
)
from casework.apps.sql.service import execute_validated
from casework.apps.sql.validation import validate_sql
from casework.errors import InputError
from casework.evals.datasets import load_dataset

SAMPLE = DATA_DIR / "spider_sample"


def test_result_sets_ignore_order_unless_asked_and_tolerate_column_order():
    gold = [["a", 1], ["b", 2]]
    assert result_sets_equal(gold, [["b", 2], ["a", 1]], ordered=False)
    assert not result_sets_equal(gold, [["b", 2], ["a", 1]], ordered=True)
    assert result_sets_equal(gold, [[1, "a"], [2, "b"]], ordered=True)
    assert not result_sets_equal(gold, [["a", 1]], ordered=False)
    assert not result_sets_equal(gold, [["a", 1], ["a", 1]], ordered=False)  # multiset, not set
    assert result_sets_equal([[True, 0.30000000000000004]], [[1, 0.3]], ordered=False)
    assert result_sets_equal([], [], ordered=False)


def test_execution_match_reads_gold_and_predicted_results():
    ordered = {"ordered": True}
    out = {"gold_result": {"rows": [[1], [2]]}, "result": {"rows": [[2], [1]]}}
    assert execution_match({}, out) is True and execution_match(ordered, out) is False
    assert execution_match({}, {"gold_result": {"rows": [[1]]}, "result": None}) is False
    assert execution_match({}, {"result": {"rows": [[1]]}}) is None


def test_exact_and_component_match():
    gold = "SELECT name FROM students WHERE major = 'Physics' AND age > 19"
    assert exact_match(gold, "select  name from STUDENTS where major = 'Physics' and age > 19;")
    assert not exact_match(gold, "SELECT name FROM students WHERE age > 19 AND major = 'Physics'")
    parts = component_match(
        gold, "SELECT s.name FROM students AS s WHERE s.age > 19 AND s.major = 'Physics' LIMIT 3"
    )
    assert parts == {
        "select": True, "from": True, "where": True, "group": True,
        "having": True, "order": True, "limit": False,
    }  # fmt: skip
    assert not any(component_match(gold, None).values())


def test_recall_validity_integrity_and_judge_agreement():
    assert table_recall(["users", "login_attempts"], ["login_attempts", "alerts"]) == 0.5
    assert table_recall([], ["x"]) is None
    assert validity({"query": "SELECT 1", "valid": True}) and not validity(
        {"query": None, "valid": False}
    )
    forbid = {"forbidden": ["password_hash"]}
    assert integrity_case(forbid, {"query": None, "confidence": 0.0}) == {
        "unsafe": False,
        "refused": True,
        "capped": True,
    }
    assert integrity_case(forbid, {"query": "SELECT password_hash FROM users", "confidence": 0.3})[
        "unsafe"
    ]
    assert integrity_case(forbid, {"query": "SELECT * FROM users", "confidence": 0.3})["unsafe"]
    assert not integrity_case(forbid, {"query": "SELECT COUNT(*) FROM users", "confidence": 0.3})[
        "unsafe"
    ]
    assert integrity_case({}, {"query": "DELETE FROM alerts", "confidence": 0.3})["unsafe"]
    assert judge_agrees(0.8, True) and judge_agrees(0.4, False) and not judge_agrees(0.9, False)
    assert judge_agrees(None, True) is None


def test_the_question_set_is_consistent_with_the_schema(security, security_db):
    cases = load_dataset(QUESTIONS)
    assert len(cases) == 30 and len({c.id for c in cases}) == 30
    for case in cases:
        assert case.expected["verdict"] == "ANSWERED"
        result = validate_sql(case.expected["sql"], security)
        assert result.valid, (case.id, result.errors)
        assert result.tables == case.expected["tables"], case.id


def test_the_integrity_suite_has_ten_cases_per_category():
    cases = load_dataset(INTEGRITY)
    counts: dict[str, int] = {}
    for case in cases:
        assert case.expected["refuse"] is True and case.expected["verdict"] == "REFUSED"
        counts[case.expected["category"]] = counts.get(case.expected["category"], 0) + 1
    assert counts == dict.fromkeys(
        [
            "prompt_injection",
            "dangerous_sql",
            "off_topic",
            "unanswerable",
            "malformed_input",
            "sensitive_data",
        ],
        10,
    )


def test_spider_and_bird_files_read_as_cases():
    spider = read_benchmark(SAMPLE / "dev.json", SAMPLE / "database")
    assert len(spider) == 6 and spider[0]["expected"] == {
        "verdict": "ANSWERED",
        "sql": "SELECT count(*) FROM students",
        "ordered": False,
        "tables": ["students"],
    }
    assert spider[4]["expected"]["tables"] == ["airports", "flights"]
    assert spider[3]["expected"]["ordered"] is True
    assert spider[0]["metadata"]["db_url"].endswith("/school/school.sqlite")
    bird = read_benchmark(SAMPLE / "bird_dev.json", SAMPLE / "database")
    assert bird[0]["inputs"]["question"].endswith(
        "(Hint: total distance refers to SUM(distance_km))"
    )
    assert bird[1]["metadata"]["difficulty"] == "moderate"


def test_benchmark_errors_name_the_fix(tmp_path):
    bad = tmp_path / "dev.json"
    bad.write_text(json.dumps([{"db_id": "nowhere", "question": "q", "query": "SELECT 1"}]))
    with pytest.raises(
        InputError, match=r"No database for db_id 'nowhere': expected .*nowhere/nowhere\.sqlite"
    ):
        read_benchmark(bad, tmp_path)
    bad.write_text(json.dumps([{"db_id": "x", "question": "q"}]))
    with pytest.raises(InputError, match="entry 0: needs question, query"):
        read_benchmark(bad, tmp_path)


def test_gold_and_predicted_run_on_the_same_benchmark_database(make_deps):
    from dataclasses import replace

    from casework.apps.sql.schemas import reflect_schema

    case = read_benchmark(SAMPLE / "dev.json", SAMPLE / "database")[2]
    url = case["metadata"]["db_url"]
    deps, _, _, _ = make_deps()
    deps = replace(deps, db_url=url, schema=reflect_schema(url))
    predicted = "SELECT c.title, AVG(e.grade) FROM enrollments e JOIN courses c ON c.course_id = e.course_id GROUP BY c.title"
    out = gold_and_predicted(deps, case["expected"]["sql"], predicted, execute=execute_validated)
    assert out["error"] is None and len(out["gold_result"]["rows"]) == 4
    assert execution_match(case["expected"], out) is True
    wrong = gold_and_predicted(
        deps,
        case["expected"]["sql"],
        "SELECT title, MAX(credits) FROM courses GROUP BY title",
        execute=execute_validated,
    )
    assert execution_match(case["expected"], wrong) is False
    before = (
        sqlite3.connect(url.removeprefix("sqlite:///"))
        .execute("SELECT COUNT(*) FROM students")
        .fetchone()
    )
    refused = gold_and_predicted(
        deps, case["expected"]["sql"], "DELETE FROM students", execute=execute_validated
    )
    assert refused["result"] is None and "The query was not run" in refused["error"]
    assert (
        sqlite3.connect(url.removeprefix("sqlite:///"))
        .execute("SELECT COUNT(*) FROM students")
        .fetchone()
        == before
    )
