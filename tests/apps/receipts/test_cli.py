"""``casework receipts ...`` commands (the Typer sub-app; one subprocess for the root CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from casework.apps.receipts.cli import app
from casework.config import get_settings
from casework.errors import InputError, NotFoundError

runner = CliRunner()


@pytest.fixture
def on_home(monkeypatch):
    def use(home):
        monkeypatch.setenv("CASEWORK_HOME", str(home))
        get_settings.cache_clear()

    yield use
    get_settings.cache_clear()


def test_list_show_and_validate_on_the_seeded_store(seeded, seeded_home, on_home):
    on_home(seeded_home)
    listed = runner.invoke(app, ["list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert {r["slug"] for r in json.loads(listed.output)} >= {"costco", "wildfork", "ralphs"}

    shown = runner.invoke(app, ["show", "wildfork"])
    assert "L12  1:2656  2:1[QUANTITY]  3:14.00[UNIT_PRICE]  4:14.00[LINE_TOTAL]" in shown.output

    res = runner.invoke(
        app, ["validate", "costco", "42", "3", "GRAND_TOTAL", "--strategy", "baseline", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["word_text"] == "303.83" and data["verdict"] == "VALID" and data["confidence"] > 80
    assert data["tool_calls"] == ["check_edge_cases", "search_similar_words"]

    text = runner.invoke(
        app, ["validate", "costco", "42", "2", "GRAND_TOTAL", "--strategy", "baseline"]
    )
    assert text.exit_code == 0, text.output
    assert "INVALID 95%  'TOTAL' as GRAND_TOTAL  (baseline" in text.output
    assert "tool calls:\n  - check_edge_cases() -> " in text.output
    ruled = runner.invoke(
        app, ["validate", "costco", "42", "3", "GRAND_TOTAL", "--strategy", "rules"]
    )
    assert ruled.exit_code == 0, ruled.output
    assert "tool calls: none\n" in ruled.output
    assert "reasoning: Edge case: An amount label needs digits" in text.output

    history = runner.invoke(app, ["history", "costco", "42", "3", "--json"])
    assert [h["label_type"] for h in json.loads(history.output)] == ["GRAND_TOTAL"]
    edges = runner.invoke(app, ["edge-cases", "list", "--label", "website", "--json"])
    assert len(json.loads(edges.output)) == 2


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (["validate", "nowhere", "1", "1", "TAX"], NotFoundError, "No receipt 'nowhere'"),
        (["validate", "costco", "999", "1", "TAX"], NotFoundError, "has no word 1 on line 999"),
        (["validate", "costco", "42", "3", "TOTALLY"], InputError, "Unknown label TOTALLY"),
        (
            ["validate", "costco", "42", "3", "TAX", "--strategy", "magic"],
            InputError,
            "Unknown strategy 'magic'",
        ),
        (["review", "accept", "99999"], NotFoundError, "No label with id 99999"),
        (["import", "/does/not/exist.json"], InputError, "is not a file"),
    ],
)
def test_user_errors_are_casework_errors(seeded, seeded_home, on_home, args, error, message):
    on_home(seeded_home)
    res = runner.invoke(app, args)
    assert res.exit_code != 0
    assert isinstance(res.exception, error) and message in str(res.exception)


def test_validate_record_review_and_harmonize_write_the_audit_trail(small, on_home):
    on_home(small.settings.home)
    rec = runner.invoke(
        app,
        [
            "validate",
            "chevron",
            "9",
            "3",
            "GRAND_TOTAL",
            "--strategy",
            "baseline",
            "--record",
            "--json",
        ],
    )
    assert rec.exit_code == 0, rec.output
    data = json.loads(rec.output)
    assert data["recorded_label_ids"]

    dry = runner.invoke(app, ["harmonize", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    report = json.loads(dry.output)
    assert report["dry_run"] and report["outliers"] == len(report["fixes"]) > 0
    assert set(report["outcomes"]) == {"RELABEL", "MARK_INVALID", "REVIEW", "KEEP"}

    real = runner.invoke(app, ["harmonize", "--merchant", "Walgreens", "--concurrency", "1"])
    assert real.exit_code == 0, real.output
    assert "summary" in real.output and "labels scanned" in real.output

    queue = json.loads(runner.invoke(app, ["review", "--json"]).output)
    assert queue, "harmonize or validate --record should have queued something"
    first = queue[0]["id"]
    accepted = runner.invoke(app, ["review", "accept", str(first), "--reviewer", "ana", "--json"])
    assert accepted.exit_code == 0, accepted.output
    rows = json.loads(accepted.output)
    assert (
        rows[0]["status"] == "VALID"
        and rows[0]["validated_by"] == "human:ana"
        and rows[0]["replaces_id"] == first
    )
    assert first not in [
        q["id"] for q in json.loads(runner.invoke(app, ["review", "--json"]).output)
    ]


def test_edge_cases_can_be_added_and_removed(small, on_home):
    on_home(small.settings.home)
    added = runner.invoke(
        app, ["edge-cases", "add", "website", "(or|for)", "Connectives are not web addresses."]
    )
    assert added.exit_code == 0 and "edge case" in added.output
    case_id = added.output.split()[2]
    removed = runner.invoke(app, ["edge-cases", "remove", case_id])
    assert removed.exit_code == 0 and "removed" in removed.output


def test_root_cli_prints_one_sentence_and_exits_non_zero(seeded, seeded_home):
    env = {**os.environ, "CASEWORK_HOME": str(seeded_home)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "casework.cli",
            "receipts",
            "validate",
            "costco",
            "999",
            "1",
            "TAX",
            "--strategy",
            "baseline",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: Receipt costco has no word 1 on line 999; see `casework receipts show costco`."
    )
    assert "Traceback" not in proc.stderr


def test_validate_under_model_names_that_model(seeded, seeded_home, on_home, tmp_path):
    """`receipts validate --model X --json`: the decision names the model it ran (issue #20);
    X replays a scripted recording of the same word."""
    from casework.apps.receipts.models import LabelInput
    from casework.apps.receipts.strategies import agent
    from casework.llm import RecordingChatModel, RoleModels, ScriptedChatModel, call
    from casework.runtime import RunConfig

    cassette = tmp_path / "agent.jsonl"
    scripted = ScriptedChatModel(
        steps=[
            call("get_word_context"),
            call("submit_decision", verdict="VALID", confidence=93, reasoning="TOTAL line."),
        ]
    )
    word = LabelInput(receipt="costco", line_id=42, word_id=3, suggested_label="GRAND_TOTAL")
    recording = RoleModels.given(RecordingChatModel.wrap(scripted, cassette))
    agent(word, seeded, RunConfig(models=recording))
    on_home(seeded_home)
    spec = f"replay:{cassette}"
    args = ["validate", "costco", "42", "3", "GRAND_TOTAL", "--strategy", "agent"]
    res = runner.invoke(app, [*args, "--model", spec, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert (data["model"], data["strategy"], data["tool_calls"]) == (
        spec,
        "agent",
        ["get_word_context", "submit_decision"],
    )


def test_import_warns_of_labels_outside_the_taxonomy(tmp_path, on_home, write_receipt):
    on_home(tmp_path / "home")
    rows = [("SHOP", "B-MERCHANT_NAME"), ("1 Main St", "B-ADDRESS")]
    path = write_receipt(tmp_path / "odd.labels.json", rows, lines=[0, 1], key="odd-0001#1")
    res = runner.invoke(app, ["import", str(path), "--no-index"])
    assert res.exit_code == 0, res.output
    assert "odd.labels.json uses labels the taxonomy does not define (ADDRESS)" in " ".join(
        res.output.split()
    )
    again = runner.invoke(app, ["import", str(path), "--no-index", "--json"])
    assert json.loads(again.output)["unknown_labels"] == {"odd.labels.json": ["ADDRESS"]}
    mapped = write_receipt(tmp_path / "odd2.labels.json", rows, lines=[0, 1], key="odd-0002#1")
    ok = runner.invoke(
        app, ["import", str(mapped), "--no-index", "--json", "--map", "ADDRESS=ADDRESS_LINE"]
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["unknown_labels"] == {}
    bad = runner.invoke(app, ["import", str(mapped), "--map", "ADDRESS"])
    assert isinstance(bad.exception, InputError) and bad.exception.exit_code == 2
    assert "write it as OLD=NEW" in str(bad.exception)
