"""A user's own database and questions: what is refused at the door, in one sentence (exit 2),
and what is stored so that later commands can use it (issue #29)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from casework import cli
from casework.apps.sql.benchmark import read_benchmark
from casework.apps.sql.deps import build_deps, open_repository
from casework.apps.sql.service import validate_query
from casework.errors import InputError


def _error(capfd: pytest.CaptureFixture[str], *args: str) -> str:
    """The one ``error:`` line of ``casework ARGS``, which must exit 2."""
    capfd.readouterr()
    with pytest.raises(SystemExit) as exited:
        cli.main(list(args))
    out, err = capfd.readouterr()
    assert exited.value.code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _database(path: Path, *statements: str) -> Path:
    with sqlite3.connect(path) as conn:
        for statement in statements:
            conn.execute(statement)
    return path


def test_a_file_that_is_no_sqlite_database_is_refused_by_reflect(settings, tmp_path, capfd):
    (tmp_path / "notes.sqlite").write_text("not a database\n")
    line = _error(capfd, "sql", "schema", "reflect", f"sqlite:///{tmp_path}/notes.sqlite")
    assert line == (
        f"error: {tmp_path}/notes.sqlite is not a SQLite database (file is not a database); "
        "give a SQLite file."
    )
    assert open_repository(settings).names() == []


def test_a_relative_sqlite_url_is_stored_absolute(settings, tmp_path, monkeypatch):
    from casework.apps.sql.service import reflect_database

    _database(tmp_path / "shop.sqlite", "CREATE TABLE customers (id INTEGER, name TEXT)")
    monkeypatch.chdir(tmp_path)
    reflect_database(settings, "sqlite:///shop.sqlite")
    monkeypatch.chdir(tmp_path.parent)  # a later command, run from another folder
    stored = open_repository(settings).get("shop")
    assert stored.db_url == f"sqlite:///{(tmp_path / 'shop.sqlite').as_posix()}"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "mysql://x/y",
            "error: Unsupported database URL 'mysql://x/y': use sqlite:///PATH or postgresql://…",
        ),
        ("sqlite:///nowhere.sqlite", "error: No SQLite database at nowhere.sqlite."),
    ],
)
def test_schema_load_refuses_a_database_it_could_never_query(
    settings, tmp_path, monkeypatch, capfd, url, message
):
    monkeypatch.chdir(tmp_path)
    schema = tmp_path / "shop.json"
    schema.write_text(json.dumps({"t": {"fields": [{"name": "a", "type": "INTEGER"}]}}))
    assert _error(capfd, "sql", "schema", "load", str(schema), "--db", url) == message
    assert open_repository(settings).names() == []  # nothing stored


def test_a_reflected_table_with_spaces_in_its_names_is_stored_and_queried(settings, tmp_path):
    from casework.apps.sql.service import reflect_database

    db = _database(
        tmp_path / "export.sqlite",
        'CREATE TABLE "Order Items" ("Item ID" INTEGER, "Unit Price" REAL, qty INTEGER)',
    )
    reflect_database(settings, f"sqlite:///{db}")
    deps = build_deps(settings, schema_name="export")  # the stored schema loads again
    assert list(deps.schema.tables) == ["Order Items"]
    result = validate_query(deps, 'SELECT "Unit Price" * qty FROM "Order Items"')
    assert result.valid, result.errors


def test_a_name_that_cannot_be_quoted_is_refused_before_it_is_stored(settings, tmp_path, capfd):
    db = _database(tmp_path / "odd.sqlite", 'CREATE TABLE t ("say ""hi""" TEXT)')
    line = _error(capfd, "sql", "schema", "reflect", f"sqlite:///{db}")
    assert line == (
        f"error: sqlite:///{db}: field t.'say \"hi\"' cannot be quoted in SQL (a double quote, "
        "a control character, or over 128 characters)."
    )
    assert open_repository(settings).names() == []


def test_a_benchmark_database_that_is_no_sqlite_file_is_refused_before_the_run(tmp_path):
    (tmp_path / "database" / "shop").mkdir(parents=True)
    (tmp_path / "database" / "shop" / "shop.sqlite").write_text("junk")
    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps([{"db_id": "shop", "question": "How many?", "query": "SELECT 1"}]))
    with pytest.raises(InputError) as refused:
        read_benchmark(dev, tmp_path / "database")
    assert str(refused.value) == (
        f"{dev} entry 0: {tmp_path}/database/shop/shop.sqlite (db_id 'shop') is not a SQLite "
        "database."
    )


def test_spider_entries_one_a_line_are_read_with_db_dir_too(tmp_path):
    sample = Path(__file__).parents[3] / "src/casework/apps/sql/data/spider_sample"
    cases = read_benchmark(sample / "dev.jsonl", sample / "database")
    assert [c["inputs"] for c in cases] == [
        c["inputs"] for c in read_benchmark(sample / "dev.json", sample / "database")
    ]
    bad = tmp_path / "dev.jsonl"
    first = (sample / "dev.jsonl").read_text().splitlines()[0]
    bad.write_text(f'{first}\n\n{{"db_id": "school", "question": "oops"\n')
    with pytest.raises(InputError) as refused:
        read_benchmark(bad, sample / "database")
    assert str(refused.value) == (
        f"{bad} line 3 is not valid JSON (Expecting ',' delimiter at column 39)."
    )
    bad.write_text(f'{first}\n{{"db_id": "school", "question": "no query"}}\n')
    with pytest.raises(InputError) as refused:
        read_benchmark(bad, sample / "database")
    assert str(refused.value) == f"{bad} line 2: needs question, query (or SQL) and db_id."


def test_a_verified_query_that_writes_is_refused_at_import(settings, tmp_path, capfd):
    cases = tmp_path / "verified.jsonl"
    cases.write_text(
        '{"id": "w1", "inputs": {"question": "Remove the open orders", "schema": "shop"}, '
        '"expected": {"sql": "DELETE FROM orders WHERE status = \'open\'"}}\n'
    )
    line = _error(capfd, "sql", "examples", "import", str(cases))
    assert line == (
        "error: Line 1: expected.sql writes (DELETE); a verified query only reads "
        "(SELECT, or WITH ... SELECT); nothing was stored."
    )


def test_reflect_and_db_create_never_print_a_password(settings, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from casework.apps.sql import service
    from casework.apps.sql.cli import app
    from casework.apps.sql.deps import BUNDLED_SCHEMA

    url = "postgresql://analyst:s3cret-pw@db.internal:5432/shop"
    schema = service.bundled_schema()
    monkeypatch.setattr(service, "reflect_database", lambda settings, url, name=None: schema)
    created = service.CreatedDatabase(schema=schema, url=url, rows={"alerts": 5})
    monkeypatch.setattr(service, "create_database_from", lambda *a, **kw: created)
    runner = CliRunner()
    out = runner.invoke(app, ["schema", "reflect", url]).output
    assert "from postgresql://analyst:***@db.internal:5432/shop" in out, out
    for args in (["--url", url], ["--url", url, "--json"]):
        out = runner.invoke(app, ["db", "create", "--schema", str(BUNDLED_SCHEMA), *args]).output
        assert "postgresql://analyst:***@db.internal:5432/shop" in out, out
        assert "s3cret-pw" not in out
