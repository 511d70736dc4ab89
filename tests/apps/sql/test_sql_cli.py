"""``casework sql …`` commands through the Typer sub-app."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from casework.apps.sql.cli import app
from casework.apps.sql.deps import BUNDLED_SCHEMA
from casework.errors import InputError, NotFoundError

runner = CliRunner()


def test_db_create_then_schema_show_uses_the_stored_schema(settings, tmp_path):
    url = f"sqlite:///{tmp_path / 'sec.sqlite'}"
    res = runner.invoke(
        app,
        ["db", "create", "--schema", str(BUNDLED_SCHEMA), "--rows", "5", "--url", url, "--json"],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["schema"] == "security" and out["rows"]["alerts"] == 5
    shown = json.loads(runner.invoke(app, ["schema", "show", "--json"]).output)
    assert shown["db_url"] == url and "login_attempts" in shown["tables"]


def test_schema_load_errors_are_one_sentence(settings, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"t": {"fields": [{"name": "a", "type": "MONEYBAG"}]}}')
    res = runner.invoke(app, ["schema", "load", str(bad)])
    assert isinstance(res.exception, InputError)
    assert "unknown type 'MONEYBAG'" in str(res.exception)
    res = runner.invoke(app, ["schema", "show", "nosuch"])
    assert isinstance(res.exception, NotFoundError)


def test_schema_load_and_reflect(settings, tmp_path, security_db):
    res = runner.invoke(app, ["schema", "load", str(BUNDLED_SCHEMA), "--name", "sec2"])
    assert res.exit_code == 0 and "20 tables" in res.output
    out = tmp_path / "reflected.json"
    res = runner.invoke(
        app, ["schema", "reflect", security_db, "--name", "live", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert len(json.loads(out.read_text())) == 20
    shown = json.loads(runner.invoke(app, ["schema", "show", "live", "--json"]).output)
    assert shown["db_url"] == security_db


@pytest.mark.parametrize("rows", ["0", "2000000"])
def test_db_create_rejects_bad_row_counts(settings, tmp_path, rows):
    res = runner.invoke(
        app,
        [
            "db",
            "create",
            "--schema",
            str(BUNDLED_SCHEMA),
            "--rows",
            rows,
            "--url",
            f"sqlite:///{tmp_path}/x.sqlite",
        ],
    )
    assert isinstance(res.exception, InputError) and "--rows must be between" in str(res.exception)
