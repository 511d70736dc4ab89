"""``casework documents …`` through the Typer sub-app, and the root CLI once for the exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casework.access import create_user, open_access
from casework.apps.documents.cli import app
from casework.config import get_settings
from casework.errors import InputError, NotFoundError

runner = CliRunner()
DATA = Path(__file__).resolve().parents[3] / "src/casework/apps/documents/data/eval/files"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    get_settings.cache_clear()
    yield tmp_path / "home"
    get_settings.cache_clear()


def _ok(args: list[str]) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, (res.output, res.exception)
    return res.stdout


def test_add_extract_show_and_stacks(home: Path) -> None:
    engine = open_access()
    create_user(engine, "ana")
    create_user(engine, "bob")
    added = json.loads(
        _ok(
            [
                "add",
                str(DATA / "invoice-01.pdf"),
                str(DATA / "invoice-02.pdf"),
                "--user",
                "ana",
                "--json",
            ]
        )
    )
    assert [d["filename"] for d in added] == ["invoice-01.pdf", "invoice-02.pdf"]
    ext = json.loads(_ok(["extract", "1", "--user", "ana", "--strategy", "rules", "--json"]))
    assert (
        ext["status"] == "completed"
        and ext["fields"]["total"] == 640.97
        and ext["method"] == "rules"
    )
    custom = json.loads(
        _ok(
            [
                "extract",
                "1",
                "--user",
                "ana",
                "--strategy",
                "rules",
                "--fields",
                "company,total,iban",
                "--json",
            ]
        )
    )
    assert custom["fields"] == {"company": "ATELIER MOREAU SARL", "total": 640.97, "iban": None}
    assert custom["mode"] == "custom" and custom["confidence_scores"]["iban"] == 0.1
    shown = json.loads(_ok(["show", "1", "--user", "ana", "--json"]))
    assert [e["id"] for e in shown["extractions"]] == [1, 2]
    assert json.loads(_ok(["list", "--user", "bob", "--json"])) == []
    res = runner.invoke(app, ["show", "1", "--user", "bob"])
    assert (
        isinstance(res.exception, NotFoundError)
        and str(res.exception) == "No document 1; list yours with `casework documents list`."
    )
    _ok(["stack", "create", "March", "--user", "ana"])
    _ok(["stack", "add", "1", "1", "2", "--user", "ana"])
    res = runner.invoke(app, ["stack", "export", "1", "--csv", "--user", "ana"])
    assert isinstance(res.exception, InputError) and "has no table yet" in str(res.exception)
    res = runner.invoke(app, ["stack", "add", "1", "99", "--user", "ana"])
    assert isinstance(res.exception, NotFoundError)
    assert json.loads(_ok(["stack", "show", "1", "--user", "ana", "--json"]))["document_ids"] == [
        1,
        2,
    ]
    runs = runner.invoke(app, ["watch", "nope", "--user", "ana"])
    assert isinstance(runs.exception, NotFoundError)
    from casework.apps.documents.deps import build_deps

    still_running = build_deps().repo.stale_runs(datetime.now(UTC) + timedelta(days=1))
    assert still_running == []  # every CLI run closed itself
    watched = runner.invoke(app, ["watch", _last_run(), "--user", "ana"])
    assert watched.exit_code == 0 and '"complete": true' in watched.stderr
    assert isinstance(
        runner.invoke(app, ["watch", _last_run(), "--user", "bob"]).exception, NotFoundError
    )


def _last_run() -> str:
    from sqlalchemy import text

    from casework.apps.documents.deps import build_deps

    with build_deps().repo.engine.connect() as conn:
        return conn.execute(
            text("SELECT id FROM documents_runs ORDER BY created_at DESC LIMIT 1")
        ).scalar_one()


def test_root_cli_prints_one_sentence_and_exits_2(home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    env = {**os.environ, "CASEWORK_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(
        [sys.executable, "-m", "casework.cli", "user", "add", "ana"],
        env=env,
        check=True,
        capture_output=True,
    )
    res = subprocess.run(
        [sys.executable, "-m", "casework.cli", "documents", "add", str(empty), "--user", "ana"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert res.stderr.strip() == "error: empty.pdf is empty (0 bytes); add a PDF, PNG or JPEG file."
    assert res.stdout == ""
