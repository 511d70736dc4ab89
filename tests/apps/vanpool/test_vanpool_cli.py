"""The CLI's faces: one-sentence errors with exit 2, JSON on stdout, the demo."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from casework.cli import app, main
from casework.config import get_settings


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("CASEWORK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CASEWORK_VANPOOL__SMTP_PORT", "1")  # nothing listens: emails queue
    monkeypatch.setenv("CASEWORK_VANPOOL__SMTP_TIMEOUT", "0.5")
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    import sys

    old = sys.argv
    sys.argv = ["casework", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return code, out.out, out.err


def test_seed_audit_case_and_queue(home, capsys) -> None:
    code, out, _ = run_main(capsys, "vanpool", "seed", "--json")
    assert code == 0 and json.loads(out)["total"]["vanpools"] == 38
    code, out, _ = run_main(capsys, "vanpool", "audit", "VP-119", "VP-101", "--json")
    data = json.loads(out)
    assert code == 0
    assert [(r["vanpool_id"], r["verdict"], r["email"]) for r in data["results"]] == [
        ("VP-119", "pending_reply", "queued"),
        ("VP-101", "verified", "-"),
    ]
    case_id = data["results"][0]["case_id"]
    code, out, _ = run_main(capsys, "vanpool", "case", case_id, "--json")
    case = json.loads(out)
    assert case["meta"]["failed_checks"] == ["location"]
    assert any(
        e["type"] == "distance_check" and e["distance_miles"] > 50 for e in case["meta"]["evidence"]
    )
    assert case["messages"][0]["status"] == "queued"  # never claimed as sent


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("vanpool", "audit", "VP-1"), "'VP-1' is not a VP id"),
        (("vanpool", "audit", "VP-999"), "Vanpool VP-999 does not exist."),
        (("vanpool", "audit"), "Name a vanpool"),
        (("vanpool", "case", "CASE-00000000"), "Case CASE-00000000 does not exist"),
        (("vanpool", "approve", "CASE-00000000"), "Case CASE-00000000 does not exist"),
        (("vanpool", "tick", "--now", "yesterday"), "--now 'yesterday' is not an ISO date-time"),
        (("vanpool", "import", "missing.csv"), "Roster file missing.csv does not exist."),
        (("vanpool", "audit", "VP-101", "--strategy", "magic"), "Unknown strategy 'magic'"),
    ],
)
def test_user_errors_are_one_sentence(home, capsys, args, message) -> None:
    run_main(capsys, "vanpool", "seed")
    code, _out, err = run_main(capsys, *args)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_demo_walks_one_case_to_an_approved_cancellation(home) -> None:
    code, out, err = run("vanpool", "demo")
    assert code == 0, err
    assert "rules audit:" in out
    assert "approved -> closed (cancelled)" in out
