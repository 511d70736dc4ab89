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
        (  # the rules are ``rules``; ``baseline`` is the receipts app's neighbour vote
            ("vanpool", "audit", "VP-101", "--strategy", "baseline"),
            "Unknown strategy 'baseline'; use one of cascade, rules, agent.",
        ),
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


def test_audit_all_reports_a_vanpool_without_riders_and_goes_on(home, capsys, tmp_path) -> None:
    run_main(capsys, "vanpool", "seed")
    rows = [
        {
            "employee_id": "EMP-0001",
            "name": "A",
            "email": "a@example.com",
            "home_zip": 2134,
            "site": "Boston",
            "shift_name": "Day",
            "shift": "Mon-Fri 07:00-15:30",
            "timezone": "America/New_York",
            "vanpool_id": "VP-900",
            "pickup_zip": "02135",
            "work_site": "Boston",
            "departure": "06:15",
            "return": "16:15",
        },
    ]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(rows))
    code, out, _ = run_main(capsys, "vanpool", "import", str(path), "--json")
    assert code == 0 and json.loads(out)["added"]["riders"] == 1  # ZIP 2134 read as 02134
    from casework.apps.vanpool.deps import build_deps

    deps = build_deps()
    deps.repo.remove_rider("VP-900", "EMP-0001", deps.now())
    code, out, _ = run_main(capsys, "vanpool", "audit", "--all", "--json")
    results = {r["vanpool_id"]: r for r in json.loads(out)["results"]}
    assert code == 0 and len(results) == 39
    assert results["VP-900"]["verdict"] == "error" and "no riders" in results["VP-900"]["reasoning"]
    assert results["VP-119"]["verdict"] == "pending_reply"


def test_audit_all_runs_every_vanpool_once_through_the_batch_seam(home, capsys) -> None:
    run_main(capsys, "vanpool", "seed")
    code, out, _ = run_main(capsys, "vanpool", "audit", "--all", "--concurrency", "3", "--json")
    data = json.loads(out)
    ids = [r["vanpool_id"] for r in data["results"]]
    assert code == 0 and data["executor"] == "local"
    assert len(ids) == len(set(ids)) == 38
    from casework.apps.vanpool.deps import build_deps

    deps = build_deps()
    assert ids == deps.repo.vanpool_ids()  # in the store's order, whatever finished first
    opened = [r["vanpool_id"] for r in data["results"] if r["case_id"]]
    cases = deps.repo.list_cases()
    assert sorted(c.vanpool_id for c in cases) == sorted(opened)  # one case per failing vanpool
    log = deps.repo.audit_log()
    verified = [e["vanpool_id"] for e in log if e["action"] == "vanpool_verified"]
    assert sorted(verified) == sorted(r["vanpool_id"] for r in data["results"] if not r["case_id"])


def test_a_vanpool_named_twice_is_audited_once(home, capsys) -> None:
    run_main(capsys, "vanpool", "seed")
    code, out, _ = run_main(capsys, "vanpool", "audit", "VP-119", "vp-119", "--json")
    assert code == 0 and [r["vanpool_id"] for r in json.loads(out)["results"]] == ["VP-119"]
    from casework.apps.vanpool.deps import build_deps

    assert len(build_deps().repo.list_cases()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--executor", "magic"), "Unknown executor 'magic'; use local or ray."),
        (("--address", "10.0.0.5:6379"), "--address is only for --executor ray."),
    ],
)
def test_audit_batch_options_are_checked_first(home, capsys, args, message) -> None:
    run_main(capsys, "vanpool", "seed")
    code, _out, err = run_main(capsys, "vanpool", "audit", "--all", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    from casework.apps.vanpool.deps import build_deps

    assert build_deps().repo.list_cases() == []  # nothing audited


def test_the_batch_auditor_travels_without_its_deps(home, capsys) -> None:
    """What a Ray worker receives: settings only; it builds its own deps on the first vanpool."""
    import pickle

    from casework.apps.vanpool.deps import build_deps
    from casework.apps.vanpool.service import VanpoolAuditor

    run_main(capsys, "vanpool", "seed")
    deps = build_deps()
    auditor = VanpoolAuditor("rules", deps.settings, deps.app, deps)
    shipped = pickle.loads(pickle.dumps(auditor))
    assert shipped.deps is None and shipped.settings.db_url == deps.settings.db_url
    row = shipped("VP-119")
    assert (row["vanpool_id"], row["verdict"], row["failed_checks"]) == (
        "VP-119",
        "pending_reply",
        ["location"],
    )
    assert shipped.deps is not None


@pytest.mark.slow
def test_audit_on_a_local_ray(home, capsys) -> None:
    run_main(capsys, "vanpool", "seed")
    code, out, _ = run_main(
        capsys, "vanpool", "audit", "VP-101", "VP-119", "--executor", "ray", "--json"
    )
    data = json.loads(out)
    assert code == 0 and data["executor"] == "ray"
    assert [(r["vanpool_id"], r["verdict"]) for r in data["results"]] == [
        ("VP-101", "verified"),
        ("VP-119", "pending_reply"),
    ]
