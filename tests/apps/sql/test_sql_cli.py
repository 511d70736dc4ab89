"""``casework sql …`` commands through the Typer sub-app."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from casework.apps.sql.cli import app
from casework.apps.sql.deps import BUNDLED_SCHEMA
from casework.errors import InputError, NotFoundError
from casework.redact import redact_url

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
    # the URL names the file, not its folder (casework.redact)
    assert shown["db_url"] == redact_url(url) and "login_attempts" in shown["tables"]


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
    assert shown["db_url"] == redact_url(security_db) == "sqlite:///***/security.sqlite"


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


def _create(tmp_path):
    url = f"sqlite:///{tmp_path / 'sec.sqlite'}"
    res = runner.invoke(
        app, ["db", "create", "--schema", str(BUNDLED_SCHEMA), "--rows", "5", "--url", url]
    )
    assert res.exit_code == 0, res.output
    return url


def test_ask_refuses_destructive_requests_without_a_model(settings, tmp_path):
    _create(tmp_path)
    res = runner.invoke(
        app, ["ask", "Delete all alerts older than 30 days", "--strategy", "v2", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert (
        out["refused"]
        and out["query"] is None
        and out["confidence"] <= 0.1
        and out["judge_score"] is None
    )
    assert out["reasoning_steps"][0]["refusal"] == "destructive"
    shown = runner.invoke(app, ["ask", "How many alerts are critical?", "--strategy", "rules"])
    assert "no query (no_answer)" in shown.output and "alerts" in shown.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", ""], "The question is empty"),
        (["ask", "x" * 100_000], "The question is 100000 characters long"),
        (["ask", "How many alerts?", "--strategy", "v9"], "Unknown strategy 'v9'"),
    ],
)
def test_ask_usage_errors_are_one_sentence(settings, args, message):
    res = runner.invoke(app, args)
    assert isinstance(res.exception, InputError) and message in str(res.exception)


def test_validate_prints_the_sqlite_query_or_the_errors(settings, tmp_path):
    _create(tmp_path)
    ok = runner.invoke(
        app,
        ["validate", "SELECT COUNT(*) FROM alerts WHERE created_at > NOW() - INTERVAL '7 days'"],
    )
    assert ok.exit_code == 0, ok.output
    assert (
        "runs on sqlite as: SELECT COUNT(*) FROM alerts WHERE created_at > DATETIME(CURRENT_TIMESTAMP, '-7 days')"
        in ok.output
    )
    bad = runner.invoke(app, ["validate", "SELECT usrname FROM users"])
    assert bad.exit_code == 1
    assert (
        "column: Column 'usrname' does not exist in users. Did you mean users.username"
        in bad.output
    )
    as_json = json.loads(runner.invoke(app, ["validate", "DROP TABLE users", "--json"]).output)
    assert as_json["valid"] is False and as_json["errors"][0]["kind"] == "read_only"


def test_validate_exits_1_through_the_root_cli(settings, tmp_path, capfd):
    from casework import cli

    _create(tmp_path)
    capfd.readouterr()
    with pytest.raises(SystemExit) as exited:
        cli.main(["sql", "validate", "SELECT usrname FROM users"])
    out, err = capfd.readouterr()
    assert exited.value.code == 1 and "Did you mean users.username" in out
    assert "Traceback" not in err


def test_ask_under_model_names_that_model(settings, tmp_path):
    """`sql ask --model X --json`: the answer names the model it ran (issue #20); X replays a
    scripted recording of the same question."""
    from casework.apps.sql.deps import build_deps
    from casework.apps.sql.strategies import STRATEGIES
    from casework.llm import RecordingChatModel, RoleModels, ScriptedChatModel, call
    from casework.runtime import RunConfig

    _create(tmp_path)
    question = "How many alerts are critical?"
    query = "SELECT COUNT(*) FROM alerts WHERE severity = 'critical'"
    scripted = ScriptedChatModel(
        steps=[call("submit_answer", query=query, explanation="Counts them.", confidence=0.8)]
    )
    cassette = tmp_path / "keyword.jsonl"
    recording = RoleModels.given(RecordingChatModel.wrap(scripted, cassette))
    STRATEGIES["keyword"](question, build_deps(settings), RunConfig(models=recording))
    spec = f"replay:{cassette}"
    res = runner.invoke(app, ["ask", question, "--strategy", "keyword", "--model", spec, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert (out["model"], out["query"], out["strategy"]) == (spec, query, "keyword")
