"""Structural validation and transpiling, checked by running the output on real SQLite."""

from __future__ import annotations

import pytest

from casework.apps.sql.database import execute_read_only
from casework.apps.sql.validation import is_sensitive, suggest, validate_sql


def _run(security, security_db, query):
    result = validate_sql(query, security)
    assert result.valid, result.errors
    return result, execute_read_only(security_db, result.transpiled)


@pytest.mark.parametrize(
    ("query", "expected_sql"),
    [
        (
            "SELECT COUNT(*) FROM alerts WHERE created_at > NOW() - INTERVAL '7 days'",
            "SELECT COUNT(*) FROM alerts WHERE created_at > DATETIME(CURRENT_TIMESTAMP, '-7 days')",
        ),
        (
            "SELECT COUNT(*) FROM dns_queries WHERE queried_at >= CURRENT_DATE - INTERVAL '2 weeks'",
            "SELECT COUNT(*) FROM dns_queries WHERE queried_at >= DATE(CURRENT_DATE, '-14 days')",
        ),
        (
            "SELECT hostname FROM hosts WHERE last_seen_at < now() - interval '1 day 2 hours'",
            "SELECT hostname FROM hosts WHERE last_seen_at < DATETIME(CURRENT_TIMESTAMP, '-1 days', '-2 hours')",
        ),
        (
            "SELECT EXTRACT(hour FROM attempted_at) AS h FROM login_attempts",
            "SELECT CAST(STRFTIME('%H', attempted_at) AS INTEGER) AS h FROM login_attempts",
        ),
        (
            "SELECT DATE_TRUNC('day', created_at) AS d FROM alerts",
            "SELECT STRFTIME('%Y-%m-%d 00:00:00', created_at) AS d FROM alerts",
        ),
        (
            "SELECT COUNT(*) FROM alerts WHERE created_at > datetime('now', '-7 days')",
            "SELECT COUNT(*) FROM alerts WHERE created_at > DATETIME('now', '-7 days')",
        ),
    ],
)
def test_postgres_date_arithmetic_becomes_sqlite_that_runs(
    security, security_db, query, expected_sql
):
    result, rows = _run(security, security_db, query)
    assert result.transpiled == expected_sql
    assert rows.columns  # SQLite ran it


def test_interval_arithmetic_agrees_with_python_dates(security, security_db):
    # The fixture's rows are anchored on 2026-11-01; count relative to a fixed literal date.
    _, got = _run(
        security,
        security_db,
        "SELECT COUNT(*) FROM alerts WHERE created_at > CAST('2026-11-01' AS TIMESTAMP) - INTERVAL '30 days'",
    )
    _, ref = _run(
        security, security_db, "SELECT COUNT(*) FROM alerts WHERE created_at > '2026-10-02'"
    )
    assert got.rows == ref.rows and 0 < got.rows[0][0] < 60


def test_the_spec_example_validates_and_names_its_tables(security, security_db):
    result, rows = _run(
        security,
        security_db,
        "SELECT u.username, COUNT(*) AS failures FROM users u JOIN login_attempts l ON l.user_id = u.id "
        "WHERE NOT l.success AND u.id NOT IN (SELECT user_id FROM account_blocks) "
        "GROUP BY u.username ORDER BY failures DESC LIMIT 10",
    )
    assert result.tables == ["users", "login_attempts", "account_blocks"]
    assert rows.columns == ["username", "failures"] and len(rows.rows) <= 10


@pytest.mark.parametrize(
    ("query", "kind", "message"),
    [
        ("", "empty", "The query is empty"),
        ("SELEC * FROM users", "syntax", "does not parse"),
        ("SELECT 1; SELECT 2", "statements", "exactly one statement; found 2"),
        ("DROP TABLE users", "read_only", "found DROP"),
        ("SELECT 1; DELETE FROM users", "read_only", "found DELETE"),
        ("UPDATE users SET status = 'active'", "read_only", "found UPDATE"),
        ("INSERT INTO users (id) VALUES (1)", "read_only", "found INSERT"),
        ("PRAGMA table_info(users)", "read_only", "found PRAGMA"),
        ("ATTACH DATABASE '/tmp/x.db' AS x", "read_only", "found ATTACH"),
        ("COPY users TO '/tmp/u.csv'", "read_only", "found COPY"),
        ("WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d", "read_only", "found DELETE"),
        ("SELECT * INTO backup FROM hosts", "read_only", "found INTO"),
        ("SELECT pg_sleep(10)", "read_only", "pg_sleep() has side effects"),
        ("SELECT load_extension('x')", "read_only", "load_extension() has side effects"),
        ("SELECT id FROM hosts FOR UPDATE", "read_only", "found LOCK"),
        ("SELECT * FROM sqlite_master", "table", "System catalog"),
        (
            "SELECT AGE(NOW(), created_at) FROM alerts",
            "syntax",
            "SQLite cannot run the query (no such function: AGE)",
        ),
        (
            "SELECT username, password_hash FROM users",
            "sensitive",
            "users.password_hash holds sensitive data",
        ),
        ("SELECT * FROM users", "sensitive", "users.password_hash"),
    ],
)
def test_rejections_name_the_problem(security, query, kind, message):
    result = validate_sql(query, security)
    assert not result.valid and result.transpiled is None
    assert result.errors[0].kind == kind
    assert message in result.errors[0].message


def test_unknown_names_come_with_the_closest_suggestions(security):
    table = validate_sql("SELECT * FROM user", security).errors[0]
    assert table.message == "Table 'user' does not exist." and table.suggestions[0] == "users"
    column = validate_sql("SELECT usrname FROM users", security).errors[0]
    assert column.message == "Column 'usrname' does not exist in users."
    assert column.suggestions[0] == "users.username"
    qualified = validate_sql("SELECT h.hostnam FROM hosts h", security).errors[0]
    assert qualified.suggestions[0] == "hosts.hostname"


def test_aggregates_of_sensitive_columns_and_ctes_are_fine(security):
    assert validate_sql("SELECT COUNT(phone_number) FROM users", security).valid
    cte = validate_sql(
        "WITH f AS (SELECT user_id FROM login_attempts WHERE NOT success) SELECT COUNT(*) FROM f",
        security,
    )
    assert cte.valid and cte.tables == ["login_attempts"]


def test_postgres_target_keeps_postgres_syntax(security):
    result = validate_sql(
        "SELECT COUNT(*) FROM alerts WHERE created_at > NOW() - INTERVAL '7 days'",
        security,
        dialect="postgres",
    )
    assert result.valid and "INTERVAL '7 DAYS'" in result.transpiled.upper().replace(
        "'7' DAYS", "'7 DAYS'"
    )


def test_sensitivity_and_suggestion_helpers():
    assert is_sensitive("password_hash", "")
    assert is_sensitive("phone_number", "Sensitive personal data: private phone number.")
    assert not is_sensitive("username", "Login name, unique.")
    assert suggest("hostnme", ["hostname", "ip_address", "os"]) == ["hostname"]
    assert suggest("zzz", ["hostname"]) == []
