"""Attacks on the web UI: password guessing, cookies, framing and sniffing, path traversal in
evaluation report files, open redirects after sign-in."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from attack_helpers import PASSWORD, Served, csrf_of, sign_in
from fastapi.testclient import TestClient

from casework.evals.results import CaseResult, EvalRun
from casework.evals.store import save_run

LOCKED = "Too many failed sign-ins for this user name from this address; try again in 5 minutes."


# ---------------------------------------------------------------- password guessing
def test_sign_in_locks_after_five_wrong_passwords_per_user_and_address(served: Served) -> None:
    guesser = served.client()
    for _ in range(4):
        assert sign_in(guesser, "ana", "guess").status_code == 401
    fifth = sign_in(guesser, "ana", "guess")
    assert fifth.status_code == 429 and LOCKED in fifth.text
    assert fifth.headers["retry-after"] == "300"
    # Locked means locked: the right password (in any spelling of the name) is not even checked.
    for name in ("ana", " ANA "):
        right = sign_in(guesser, name, PASSWORD)
        assert right.status_code == 429 and LOCKED in right.text
        assert "cw_session" not in right.headers.get("set-cookie", "")
    # Nobody else is locked out: another user here, and ana from another address.
    assert sign_in(guesser, "bob", PASSWORD).status_code == 303
    elsewhere = TestClient(served.app, client=("192.0.2.7", 40000))
    assert sign_in(elsewhere, "ana", PASSWORD).status_code == 303
    # The lock runs out (the clock is the throttle's, not the test's wall time).
    throttle = served.app.state.web.throttle
    start = throttle.clock()
    throttle.clock = lambda: start + 301
    assert sign_in(guesser, "ana", PASSWORD).status_code == 303


def test_a_good_sign_in_clears_the_count(served: Served) -> None:
    client = served.client()
    for _ in range(2):
        for _ in range(4):
            assert sign_in(client, "ana", "guess").status_code == 401
        assert sign_in(client, "ana", PASSWORD).status_code == 303


# ---------------------------------------------------------------- cookies
def test_cookies_are_http_only_and_same_site(served: Served) -> None:
    client = served.client()
    form = client.get("/login")
    ok = client.post(
        "/login",
        data={"username": "ana", "password": PASSWORD, "csrf": csrf_of(form.text)},
        follow_redirects=False,
    )
    cookies = [form.headers["set-cookie"], *ok.headers.get_list("set-cookie")]
    session = next(c for c in cookies if c.startswith("cw_session="))
    for cookie in (form.headers["set-cookie"], session):
        flags = {part.strip().split("=")[0].lower(): part for part in cookie.split(";")}
        assert "httponly" in flags, cookie
        assert flags["samesite"].split("=")[1].strip().lower() in ("lax", "strict"), cookie


# ---------------------------------------------------------------- headers
def _report(served: Served, tmp_path: Path) -> Path:
    folder = tmp_path / "run-a"
    folder.mkdir()
    (folder / "report.html").write_text("<html><body>Report A</body></html>")
    (folder / "sub").mkdir()
    (tmp_path / "secret.txt").write_text("not yours")
    os.symlink(tmp_path / "secret.txt", folder / "link.txt")
    run = EvalRun(
        run_id="run-a",
        app="receipts",
        strategy="baseline",
        dataset="d.jsonl",
        dataset_sha256="s",
        created_at="2026-11-20T10:00:00+00:00",
        cases=[CaseResult(case_id="c0", index=0, verdict="VALID", expected_verdict="VALID")],
        metrics={},
        run_dir=str(folder),
    )
    save_run(run, settings=served.settings)
    return folder


def test_security_headers_on_every_answer(served: Served, tmp_path: Path) -> None:
    _report(served, tmp_path)
    anon, ana, api = served.client(), served.client(), served.api()
    assert sign_in(ana, "ana", PASSWORD).status_code == 303
    answers = {
        "sign-in page": anon.get("/login"),
        "redirect to sign-in": anon.get("/runs", follow_redirects=False),
        "plain 401": anon.get("/runs/x/events"),
        "wrong password": sign_in(served.client(), "ana", "guess"),
        "inbox": ana.get("/"),
        "error page": ana.get("/items/nowhere/1"),
        "report file": ana.get("/evals/run-a/files/report.html"),
        "script": ana.get("/static/web.js"),
        "health": anon.get("/health"),
        "API 401": anon.get("/receipts/receipts"),
        "API JSON": api.get("/receipts/receipts"),
        "API 404": api.get("/nowhere"),
        "API docs": anon.get("/docs"),
    }
    for name, res in answers.items():
        h = res.headers
        assert "frame-ancestors 'none'" in h.get("content-security-policy", ""), name
        assert h.get("x-content-type-options") == "nosniff", name
        assert h.get("x-frame-options") == "DENY", name
        assert h.get("referrer-policy") == "same-origin", name
    assert answers["inbox"].status_code == 200 and answers["report file"].status_code == 200
    # Pages keep their own policies: no inline script on a page, nothing active in a report.
    assert "script-src 'self';" in answers["inbox"].headers["content-security-policy"]
    assert (
        answers["report file"].headers["content-security-policy"].startswith("default-src 'none'")
    )


# ---------------------------------------------------------------- report files
def _raw_get(app: Any, raw_path: bytes, cookie: str) -> tuple[int, bytes]:
    """GET a path exactly as given: HTTP clients remove ``..`` segments before sending, a
    hand-made request does not (nor does uvicorn, which only percent-decodes)."""
    path = unquote(raw_path.decode("latin-1"), encoding="latin-1")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": raw_path,
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"cookie", cookie.encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    answer: dict[str, Any] = {"status": 0, "body": b""}

    async def main() -> None:
        done = asyncio.Event()
        asked = False

        async def receive() -> dict[str, Any]:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await done.wait()  # then the client hangs up, as a browser does
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")
                if not message.get("more_body", False):
                    done.set()

        await app(scope, receive, send)

    asyncio.run(main())
    return answer["status"], answer["body"]


ESCAPES = [
    b"../secret.txt",
    b"sub/../../secret.txt",
    b"%2e%2e/secret.txt",
    b"%2E%2E%2Fsecret.txt",
    b"..%2fsecret.txt",
    b"..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    b"%252e%252e%252fsecret.txt",
    b"/etc/passwd",
    b"%2Fetc%2Fpasswd",
    b"..\\secret.txt",
    b"....//secret.txt",
    b"link.txt",
    b"report.html%00.txt",
    b"sub",
    b"",
]


def test_report_files_stay_inside_the_run_folder(served: Served, tmp_path: Path) -> None:
    _report(served, tmp_path)
    ana = served.client()
    assert sign_in(ana, "ana", PASSWORD).status_code == 303
    cookie = f"cw_session={ana.cookies['cw_session']}"
    ok_status, ok_body = _raw_get(served.app, b"/evals/run-a/files/report.html", cookie)
    assert ok_status == 200 and b"Report A" in ok_body
    for escape in ESCAPES:
        status, body = _raw_get(served.app, b"/evals/run-a/files/" + escape, cookie)
        assert status in (400, 404), (escape, status, body[:200])
        assert b"not yours" not in body and b"root:" not in body


# ---------------------------------------------------------------- open redirects
OFF_SITE = [
    "//evil.example",
    "///evil.example",
    "//evil.example/%2F..",
    "http://evil.example",
    "https://evil.example/login",
    "HTTP://evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    " //evil.example",
    "javascript:alert(1)",
    "evil.example",
    "",
]


def _is_local(location: str) -> bool:
    # A browser drops tabs and newlines from a URL and reads a backslash as a slash.
    seen = location.replace("\t", "").replace("\n", "").replace("\r", "").replace("\\", "/")
    parts = urlsplit(seen)
    return seen.startswith("/") and not seen.startswith("//") and not parts.netloc


def test_next_after_sign_in_only_goes_to_local_paths(served: Served) -> None:
    client = served.client()
    for target in OFF_SITE:  # the form carries next= to the sign-in, which redirects to it
        form = client.get("/login", params={"next": target})
        assert form.status_code == 200 and 'name="next" value="/"' in form.text, target
    for target in OFF_SITE[::3]:  # and the sign-in checks it again (a password check each)
        done = sign_in(client, "ana", PASSWORD, next_=target)
        assert done.status_code == 303 and done.headers["location"] == "/", target


def test_next_keeps_a_local_path_and_every_redirect_stays_local(served: Served) -> None:
    client = served.client()
    done = sign_in(client, "ana", PASSWORD, next_="/runs?x=1")
    assert done.headers["location"] == "/runs?x=1"
    anon = served.client()
    for path in ("//evil.example/", "/%2F%2Fevil.example", "/runs/..%2F..%2F"):
        res = anon.get(path, follow_redirects=False)
        if res.is_redirect:
            assert _is_local(res.headers["location"]), (path, res.headers["location"])
