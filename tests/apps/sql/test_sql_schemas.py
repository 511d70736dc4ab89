"""Schema files, synthetic rows and `sql db create`."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta

import pytest

from casework.apps.sql.database import create_database
from casework.apps.sql.schemas import load_schema, parse_schema_document, reflect_schema
from casework.apps.sql.synth import WINDOW_DAYS, enum_values, generate_rows, reference_of
from casework.errors import InputError

ANCHOR = datetime(2026, 11, 1)


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_the_bundled_security_schema_has_twenty_tables(security):
    assert len(security.tables) == 20
    users = security.table("USERS")
    assert users is not None and users.column("mfa_enabled").type == "BOOLEAN"
    assert security.tables["login_attempts"].category == "authentication"


def test_unknown_type_names_table_field_and_known_types(tmp_path):
    path = _write(tmp_path, "s.json", {"t": {"fields": [{"name": "a", "type": "GEOGRAPHY"}]}})
    with pytest.raises(
        InputError, match=r"field t\.a has unknown type 'GEOGRAPHY'; use one of VARCHAR"
    ):
        load_schema(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"is not valid JSON \(Expecting property name"),
        ("[1, 2]", "must be a JSON object mapping table names"),
        ('{"t": {"description": "x"}}', r"table 't' needs a \"fields\" list"),
        ('{"t": {"fields": [{"type": "INTEGER"}]}}', r"table 't' has a field that is not .*name"),
        ('{"bad name": {"fields": [{"name": "a", "type": "INT"}]}}', "not a plain SQL identifier"),
    ],
)
def test_invalid_files_fail_with_one_sentence(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        load_schema(_write(tmp_path, "s.json", text))


def test_a_folder_merges_files_and_rejects_a_table_defined_twice(tmp_path):
    folder = tmp_path / "schemas"
    folder.mkdir()
    one = {"a": {"fields": [{"name": "id", "type": "INTEGER"}]}}
    _write(folder, "1.json", one)
    _write(folder, "2.json", {"b": {"fields": [{"name": "x", "type": "varchar(10)"}]}})
    assert sorted(load_schema(folder).tables) == ["a", "b"]
    _write(folder, "3.json", one)
    with pytest.raises(InputError, match="Table 'a' is defined twice"):
        load_schema(folder)
    with pytest.raises(InputError, match="does not exist"):
        load_schema(tmp_path / "missing.json")


def test_enums_and_references_come_from_descriptions(security):
    assert enum_values("Triage state. One of: new, triaged, closed, false_positive.") == [
        "new",
        "triaged",
        "closed",
        "false_positive",
    ]
    assert enum_values("one of low, medium or high") == ["low", "medium", "high"]
    assert enum_values("Free text.") == []
    hosts = security.tables["hosts"]
    assert reference_of(hosts.column("owner_id"), security) == "users"
    assert reference_of(security.tables["alerts"].column("rule_id"), security) == "detection_rules"
    assert reference_of(hosts.column("id"), security) is None


def test_synthetic_rows_are_deterministic_typed_and_plausible(security):
    rows = generate_rows(security, 50, seed=3, anchor=ANCHOR)
    assert rows == generate_rows(security, 50, seed=3, anchor=ANCHOR)
    assert rows != generate_rows(security, 50, seed=4, anchor=ANCHOR)
    alerts = rows["alerts"]
    assert [a["id"] for a in alerts] == list(range(1, 51))
    assert {a["severity"] for a in alerts} == {"low", "medium", "high", "critical"}
    assert all(1 <= a["host_id"] <= 50 for a in alerts)
    assert all(ANCHOR - timedelta(days=WINDOW_DAYS) <= a["created_at"] <= ANCHOR for a in alerts)
    for a in rows["login_attempts"]:
        assert a["source_ip"].count(".") == 3
        assert a["failure_reason"] is None if a["success"] else a["failure_reason"]
    for b in rows["account_blocks"]:
        assert b["unblocked_at"] is None or b["unblocked_at"] > b["blocked_at"]
    assert all(len(u["full_name"].split()) == 2 and "@" in u["email"] for u in rows["users"])
    assert all("." in h["hostname"] for h in rows["hosts"])
    assert all(len(m["file_hash"]) == 64 for m in rows["malware_detections"])
    for ti in rows["threat_indicators"]:
        shape = {
            "ip": r"\d+\.\d+\.\d+\.\d+",
            "domain": r"[a-z.-]+",
            "hash": r"[0-9a-f]{64}",
            "url": r"https://\S+",
        }
        assert re.fullmatch(shape[ti["indicator_type"]], ti["value"]), ti


def test_db_create_builds_every_table_and_refuses_to_overwrite(security, tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    counts = create_database(security, url, rows=12, seed=1, anchor=ANCHOR)
    assert counts == {name: 12 for name in security.tables}
    with sqlite3.connect(tmp_path / "db.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM incident_alerts").fetchone() == (12,)
        assert conn.execute("SELECT typeof(cvss_score) FROM vulnerabilities").fetchone() == (
            "real",
        )
    with pytest.raises(InputError, match="already exists; pass --replace"):
        create_database(security, url, rows=5)
    assert not (tmp_path / "db.sqlite.tmp").exists()


def test_reflect_reads_back_a_created_database(security, security_db):
    reflected = reflect_schema(security_db, name="back")
    assert sorted(reflected.tables) == sorted(security.tables)
    types = {c.name: c.type for c in reflected.tables["users"].fields}
    assert types["username"] == "VARCHAR(64)" and types["mfa_enabled"] == "BOOLEAN"
    assert parse_schema_document(reflected.to_document())  # reflected schemas load again
    with pytest.raises(InputError, match="No SQLite database at"):
        reflect_schema("sqlite:////nonexistent/x.sqlite")


def test_anchor_defaults_to_today(security):
    rows = generate_rows(security, 5)
    assert all(r["created_at"] <= datetime.now() + timedelta(days=1) for r in rows["alerts"])
