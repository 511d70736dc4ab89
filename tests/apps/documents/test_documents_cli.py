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
from casework.llm import RoleModels
from casework.runtime import RunConfig

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
    assert [d["filename"] for d in added["documents"]] == ["invoice-01.pdf", "invoice-02.pdf"]
    assert added["errors"] == []
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
    from casework.apps.documents.service import build_deps

    still_running = build_deps().repo.stale_runs(datetime.now(UTC) + timedelta(days=1))
    assert still_running == []  # every CLI run closed itself
    watched = runner.invoke(app, ["watch", _last_run(), "--user", "ana"])
    assert watched.exit_code == 0 and '"complete": true' in watched.stderr
    assert isinstance(
        runner.invoke(app, ["watch", _last_run(), "--user", "bob"]).exception, NotFoundError
    )


def _last_run() -> str:
    from sqlalchemy import text

    from casework.apps.documents.service import build_deps

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


def test_documents_user_add_is_the_platform_user(home: Path) -> None:
    """`documents user add` is `casework user add`: a platform user, then usable as --user."""
    from casework.access import get_user, list_users

    res = runner.invoke(app, ["user", "add", "carla", "--role", "reviewer"])
    assert res.exit_code == 0, res.output
    assert "added user carla (id 1, role reviewer)" in res.stdout
    user = get_user(open_access(), "carla")
    assert (user.id, user.role) == (1, "reviewer")
    assert [u.name for u in list_users(open_access())] == ["carla"]
    again = runner.invoke(app, ["user", "add", "carla"])
    assert again.exit_code != 0 and "carla" in str(again.exception)
    assert json.loads(_ok(["list", "--user", "carla", "--json"])) == []


def test_add_many_files_reports_each_bad_one_and_keeps_the_rest(home: Path, tmp_path: Path) -> None:
    create_user(open_access(), "ana")
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    res = runner.invoke(
        app,
        [
            "add",
            str(DATA / "invoice-01.pdf"),
            str(empty),
            str(text),
            str(DATA / "form-22.pdf"),
            "--user",
            "ana",
            "--concurrency",
            "2",
            "--json",
        ],
    )
    assert res.exit_code == 2
    out = json.loads(res.stdout)
    assert [d["filename"] for d in out["documents"]] == ["invoice-01.pdf", "form-22.pdf"]
    assert [e["error"] for e in out["errors"]] == [
        "empty.pdf is empty (0 bytes); add a PDF, PNG or JPEG file.",
        "notes.txt is not a PDF, PNG or JPEG file; those are the types documents reads.",
    ]
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert lines == [f"error: {e['error']}" for e in out["errors"]]
    listed = json.loads(_ok(["list", "--user", "ana", "--json"]))
    assert sorted(d["filename"] for d in listed) == ["form-22.pdf", "invoice-01.pdf"]
    bad = runner.invoke(app, ["add", str(empty), "--user", "ana", "--executor", "dask"])
    assert isinstance(bad.exception, InputError) and "Unknown executor 'dask'" in str(bad.exception)


def test_correct_in_words_with_a_scripted_model(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casework.apps.documents import cli as documents_cli
    from casework.llm import ScriptedChatModel, call

    create_user(open_access(), "ana")
    _ok(["add", str(DATA / "invoice-01.pdf"), "--user", "ana"])
    ext = json.loads(_ok(["extract", "1", "--user", "ana", "--strategy", "rules", "--json"]))
    assert ext["fields"]["total"] == 640.97
    model = ScriptedChatModel(
        steps=[
            call("get_current_extraction"),
            call("update_field", path="total", value=645.1, confidence=1.0),
            call("complete_extraction"),
        ]
    )
    monkeypatch.setattr(
        documents_cli, "_config", lambda deps, spec: RunConfig(models=RoleModels.given(model))
    )
    res = runner.invoke(
        app, ["correct", str(ext["id"]), "the total is 645.10", "--user", "ana", "--json"]
    )
    assert res.exit_code == 0, (res.output, res.exception)
    fixed = json.loads(res.stdout)
    assert fixed["status"] == "completed" and fixed["fields"]["total"] == 645.1
    assert fixed["confidence_scores"]["total"] == 1.0
    assert fixed["fields"]["invoice_number"] == ext["fields"]["invoice_number"]  # untouched
    assert '"tool": "update_field"' not in res.stdout  # events went to stderr, not the JSON
    res = runner.invoke(app, ["correct", str(ext["id"]), "  ", "--user", "ana"])
    assert isinstance(res.exception, InputError) and "Say what to correct" in str(res.exception)
    res = runner.invoke(app, ["correct", "99", "the total is 1", "--user", "ana"])
    assert isinstance(res.exception, NotFoundError)


def test_stack_build_of_many_documents_goes_row_by_row(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casework.apps.documents import cli as documents_cli
    from casework.llm import ScriptedChatModel, call

    create_user(open_access(), "ana")
    files = [str(DATA / f"invoice-0{i}.pdf") for i in range(1, 7)]
    _ok(["add", *files, "--user", "ana"])
    _ok(["stack", "create", "Invoices", "--user", "ana"])
    _ok(["stack", "add", "1", *map(str, range(1, 7)), "--user", "ana"])
    columns = [{"name": "invoice_number", "type": "text"}]
    steps = [call("define_columns", columns=columns)] + [
        call(
            "extract_row",
            doc_id=d,
            values={"invoice_number": f"INV-{d}"},
            confidences={"invoice_number": 0.9},
        )
        for d in range(1, 7)
    ]
    model = ScriptedChatModel(steps=steps)
    monkeypatch.setattr(
        documents_cli, "_config", lambda deps, spec: RunConfig(models=RoleModels.given(model))
    )
    res = runner.invoke(app, ["stack", "build", "1", "--user", "ana", "--concurrency", "1"])
    assert res.exit_code == 0, (res.output, res.exception)
    rows = [line.split(" row ", 1)[1] for line in res.stderr.splitlines() if " row " in line]
    assert rows == [f"{d}/6: document {d} written" for d in range(1, 7)]
    shown = json.loads(_ok(["stack", "show", "1", "--user", "ana", "--json"]))
    assert shown["table"]["status"] == "completed"
    assert [r["cells"] for r in shown["table"]["rows"]] == [
        {"invoice_number": f"INV-{d}"} for d in range(1, 7)
    ]
    bad = runner.invoke(app, ["stack", "build", "1", "--user", "ana", "--address", "h:1"])
    assert isinstance(bad.exception, InputError) and "--address is only for --executor ray" in str(
        bad.exception
    )


def test_extract_under_model_names_that_model(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`documents extract --model X`: the run's decision names the model it ran (issue #20);
    X replays a scripted recording of an extraction of the same document."""
    from casework.access import get_user
    from casework.apps.documents import service
    from casework.apps.documents.models import ExtractionInput
    from casework.apps.documents.service import runs
    from casework.apps.documents.strategies import STRATEGIES
    from casework.llm import RecordingChatModel, ScriptedChatModel, call

    create_user(open_access(), "ana")
    _ok(["add", str(DATA / "invoice-01.pdf"), "--user", "ana"])
    scripted = ScriptedChatModel(
        steps=[
            call("extract_fields", fields={"total": 640.97}, confidences={"total": 0.9}),
            call("complete_extraction"),
        ]
    )
    cassette = tmp_path / "agent.jsonl"
    recording = RoleModels.given(RecordingChatModel.wrap(scripted, cassette))
    ana = get_user(open_access(), "ana")
    given = ExtractionInput(document_id=1, user_id=ana.id)
    STRATEGIES["agent"](given, service.build_deps(), RunConfig(models=recording))
    decisions: list = []
    complete = runs._extraction_complete
    monkeypatch.setattr(runs, "_extraction_complete", lambda d: decisions.append(d) or complete(d))
    spec = f"replay:{cassette}"
    argv = ["extract", "1", "--user", "ana", "--model", spec, "--strategy", "agent", "--json"]
    ext = json.loads(_ok(argv))
    assert ext["status"] == "completed" and ext["fields"] == {"total": 640.97}
    [decision] = decisions
    assert (decision.run.model, decision.run.strategy) == (spec, "agent")
    # the default is the cascade: the rules find every field of this invoice, no model runs
    again = json.loads(_ok(["extract", "1", "--user", "ana", "--model", spec, "--json"]))
    assert again["status"] == "completed"
    run = decisions[-1].run
    assert (run.strategy, run.decided_by, run.model) == ("cascade", "rules", None)
