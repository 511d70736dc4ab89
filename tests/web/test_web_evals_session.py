"""Evaluation runs in the UI (list, report, compare) and the signed session cookie."""

from __future__ import annotations

import os
import stat
import time

from web_helpers import Site

from casework.evals.results import CaseResult, EvalRun
from casework.evals.store import save_run
from casework.web.session import (
    decode_session,
    encode_session,
    load_secret,
    sign,
    unsign,
)

SESSION_ID = "A" * 43  # the length of ``secrets.token_urlsafe(32)``


def _eval_run(run_id: str, verdicts: list[str], run_dir: str | None) -> EvalRun:
    cases = [
        CaseResult(
            case_id=f"c{i}", index=i, verdict=v, expected_verdict="VALID", correct=v == "VALID"
        )
        for i, v in enumerate(verdicts)
    ]
    return EvalRun(
        run_id=run_id,
        app="receipts",
        strategy="baseline",
        dataset="d.jsonl",
        dataset_sha256="s",
        created_at="2026-11-20T10:00:00+00:00",
        cases=cases,
        metrics={"verdict_accuracy": sum(c.correct for c in cases) / len(cases)},
        run_dir=run_dir,
    )


def test_eval_runs_listed_with_their_report_and_compared(site: Site, tmp_path) -> None:
    folder = tmp_path / "run-a"
    folder.mkdir()
    (folder / "report.html").write_text("<html><body><h1>Report A</h1></body></html>")
    (tmp_path / "secret.txt").write_text("not yours")
    save_run(_eval_run("run-a", ["VALID", "INVALID", "VALID"], str(folder)), settings=site.settings)
    save_run(_eval_run("run-b", ["VALID", "VALID", "VALID"], None), settings=site.settings)
    ana = site.client("ana")
    page = ana.get("/evals").text
    assert 'href="/evals/run-a/files/report.html"' in page
    assert "66.7%" in page and "100.0%" in page
    assert 'href="/evals/run-b/files' not in page  # no report folder: no link
    report = ana.get("/evals/run-a/files/report.html")
    assert report.status_code == 200 and "Report A" in report.text
    assert report.headers["content-security-policy"].startswith("default-src 'none'")
    assert ana.get("/evals/run-a/files/../secret.txt").status_code == 404
    assert ana.get("/evals/run-a/files/%2e%2e/secret.txt").status_code == 404
    compared = ana.get("/evals/compare?a=run-a&b=run-b")
    assert compared.status_code == 200 and "run-a" in compared.text and "run-b" in compared.text
    assert ana.get("/evals/compare?a=run-a&b=run-a").status_code == 422
    assert ana.get("/evals/compare?a=run-a&b=nope").status_code == 404


def test_signed_values_reject_tampering_and_age(tmp_path, monkeypatch) -> None:
    secret = b"k" * 32
    value = sign(secret, {"u": 1, "t": time.time()})
    assert unsign(secret, value) == {"u": 1, "t": unsign(secret, value)["t"]}
    body, mac = value.split(".")
    assert unsign(secret, body + "x." + mac) is None
    assert unsign(b"other", value) is None
    assert unsign(secret, "garbage") is None
    old = sign(secret, {"u": 1, "t": time.time() - 3605})
    assert unsign(secret, old, max_age=3600) is None
    # The cookie carries only a session id; anything else in a signed value is no session.
    assert decode_session(secret, encode_session(secret, SESSION_ID)) == SESSION_ID
    assert decode_session(b"other", encode_session(secret, SESSION_ID)) is None
    assert decode_session(secret, sign(secret, {"s": "short"})) is None
    assert decode_session(secret, sign(secret, {"u": 1, "t": time.time()})) is None
    assert decode_session(secret, "x" * 500) is None


def test_secret_is_generated_once_private_and_the_environment_wins(settings, monkeypatch) -> None:
    monkeypatch.delenv("CASEWORK_WEB_SECRET", raising=False)
    first = load_secret(settings)
    path = settings.home / "web-secret"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_secret(settings) == first and len(first) >= 48
    monkeypatch.setenv("CASEWORK_WEB_SECRET", "from-the-env")
    assert load_secret(settings) == b"from-the-env"
