"""Issue #30's attacks on sessions, sign-in limits and bodies, each as requests against the
server (parts 3, 5 and 6 of "trust"):

* a session cookie replayed after sign-out, a password change and disabling the user;
* rotating ``X-Forwarded-For``, spraying names, flooding the throttle with other names, and
  guessing API tokens;
* JSON in UTF-16/UTF-32, upload names, ``Last-Event-ID`` junk, multipart bodies on JSON routes
  and 422s that would echo the body.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from attack_helpers import PASSWORD, Served, csrf_of, make_served, sign_in
from fastapi.testclient import TestClient
from httpx import Response

from casework.access import (
    AuthError,
    disable_user,
    list_sessions,
    open_access,
    revoke_sessions,
    set_password,
    verify_password,
)
from casework.apps.documents import ocr
from casework.config import ServerSettings
from casework.runtime.context import Caller, Role
from casework.web import signin
from casework.web import throttle as throttle_module

MB = 1024 * 1024
INVOICE = Path(ocr.__file__).parent / "data" / "eval" / "files" / "invoice-01.pdf"


def _one_sentence(res: Response) -> str:
    body = res.json()
    assert set(body) == {"error", "kind"}, body
    message = body["error"]
    assert message.endswith(".") and ". " not in message and "\n" not in message, message
    return message


def _at(served: Served, address: str) -> TestClient:
    """A client whose requests come from ``address`` (the peer the server sees)."""
    return TestClient(served.app, client=(address, 40000), raise_server_exceptions=False)


def _guess(client: TestClient, name: str, password: str, **headers: str) -> Response:
    form = client.get("/login")
    return client.post(
        "/login",
        data={"username": name, "password": password, "csrf": csrf_of(form.text), "next": "/"},
        headers=headers,
        follow_redirects=False,
    )


# ---------------------------------------------------------------- part 3: sessions
def _replayed(served: Served, cookie: str) -> tuple[int, str]:
    """The inbox asked for with a copy of a session cookie, from another browser."""
    thief = served.client()
    thief.cookies.set("cw_session", cookie)
    res = thief.get("/", follow_redirects=False)
    return res.status_code, res.headers.get("location", "")


def test_a_copied_session_cookie_dies_with_sign_out_password_change_and_disabling(
    served: Served,
) -> None:
    engine = open_access(served.settings)

    def signed_in() -> tuple[TestClient, str]:
        browser = served.client()
        assert sign_in(browser, "ana", PASSWORD).status_code == 303
        cookie = browser.cookies["cw_session"]
        assert _replayed(served, cookie)[0] == 200  # the copy works while the session lives
        return browser, cookie

    ended: dict[str, tuple[int, str]] = {}
    browser, cookie = signed_in()
    csrf = csrf_of(browser.get("/").text)
    refused = browser.post("/logout", data={"csrf": "forged"}, follow_redirects=False)
    assert refused.status_code == 403 and _replayed(served, cookie)[0] == 200  # CSRF holds
    assert browser.post("/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    ended["sign-out"] = _replayed(served, cookie)

    _, cookie = signed_in()
    set_password(engine, "ana", "another-long-password")
    ended["password change"] = _replayed(served, cookie)
    set_password(engine, "ana", PASSWORD)

    _, cookie = signed_in()
    disable_user(engine, "ana")
    ended["disabled"] = _replayed(served, cookie)

    assert ended == {
        "sign-out": (303, "/login?next=%2F"),
        "password change": (303, "/login?next=%2F"),
        "disabled": (303, "/login?next=%2F"),
    }


def test_revoking_from_the_server_and_the_idle_timeout_end_sessions(tmp_path) -> None:
    served = make_served(tmp_path / "home", server=ServerSettings(session_idle_seconds=2))
    engine = open_access(served.settings)
    browser = _at(served, "192.0.2.44")
    assert sign_in(browser, "ana", PASSWORD).status_code == 303
    cookie = browser.cookies["cw_session"]
    listed = list_sessions(engine, "ana")
    assert [s.address for s in listed] == ["192.0.2.44"]
    assert cookie not in json.dumps([s.to_dict() for s in listed])
    assert revoke_sessions(engine, "ana", str(listed[0].id)) == 1
    assert _replayed(served, cookie)[0] == 303

    assert sign_in(browser, "ana", PASSWORD).status_code == 303
    assert browser.get("/", follow_redirects=False).status_code == 200
    time.sleep(2.2)  # idle past session_idle_seconds
    assert browser.get("/", follow_redirects=False).status_code == 303
    assert list_sessions(engine, "ana") == []  # the idle session's row went


# ---------------------------------------------------------------- part 5: sign-in limits
LOCKED_PAIR = "Too many failed sign-ins for this user name from this address"
LOCKED_NAME = "Too many failed sign-ins for this user name;"
LOCKED_ADDRESS = "Too many failed sign-ins for this address;"


def test_rotating_x_forwarded_for_does_not_escape_the_lock(served: Served) -> None:
    """No trusted proxy (the default): the header is ignored, even from loopback."""
    guesser = _at(served, "127.0.0.1")
    answers = [
        _guess(guesser, "ana", f"guess{i}", **{"X-Forwarded-For": f"10.0.{i}.{i}"}).status_code
        for i in range(12)
    ]
    assert answers == [401] * 4 + [429] * 8
    right = _guess(guesser, "ana", PASSWORD, **{"X-Forwarded-For": "10.9.9.9"})
    assert right.status_code == 429 and LOCKED_PAIR in right.text


def test_behind_a_trusted_proxy_guesses_from_many_addresses_hit_the_per_name_limit(
    tmp_path,
) -> None:
    served = make_served(tmp_path / "home", server=ServerSettings(trusted_proxies=["10.0.0.2"]))
    proxy = _at(served, "10.0.0.2")
    answers = [
        _guess(proxy, "ana", "guess", **{"X-Forwarded-For": f"203.0.113.{i}"}).status_code
        for i in range(12)
    ]
    assert answers == [401] * 9 + [429] * 3  # every guess from its own address
    fresh = _guess(proxy, "ana", PASSWORD, **{"X-Forwarded-For": "198.51.100.1"})
    assert fresh.status_code == 429 and LOCKED_NAME in fresh.text
    # The proxy is believed: bob signs in through it, and his session records his address.
    assert _guess(proxy, "bob", PASSWORD, **{"X-Forwarded-For": "198.51.100.7"}).status_code == 303
    sessions = list_sessions(open_access(served.settings), "bob")
    assert [s.address for s in sessions] == ["198.51.100.7"]


def test_spraying_names_from_one_address_hits_the_per_address_limit(served: Served) -> None:
    sprayer = _at(served, "192.0.2.66")
    answers = [_guess(sprayer, f"user{i}", "Summer2026!").status_code for i in range(21)]
    assert answers == [401] * 19 + [429] * 2
    bob_here = _guess(sprayer, "bob", PASSWORD)
    assert bob_here.status_code == 429 and LOCKED_ADDRESS in bob_here.text
    assert _guess(_at(served, "192.0.2.67"), "bob", PASSWORD).status_code == 303


@pytest.mark.parametrize(
    ("flood", "bound"),
    [
        pytest.param(10_000, None, marks=pytest.mark.slow, id="10000-names-default-bound"),
        pytest.param(600, 100, id="600-names-bound-100"),
    ],
)
def test_a_flood_of_other_names_does_not_evict_a_lock(
    tmp_path, monkeypatch, flood: int, bound: int | None
) -> None:
    """The flood comes through a trusted proxy from a new address per request (so no address
    locks), each a wrong password for a new name. The password check is swapped for an
    instant refusal: 10,000 real Argon2 checks would take minutes and test nothing more. The
    quick variant lowers the store's bound so that 600 names overflow it six times."""
    if bound is not None:
        monkeypatch.setattr(throttle_module, "MAX_KEYS", bound)
    served = make_served(tmp_path / "home", server=ServerSettings(trusted_proxies=["10.0.0.2"]))
    proxy = _at(served, "10.0.0.2")
    victim = {"X-Forwarded-For": "192.0.2.10"}
    for _ in range(5):
        locked = _guess(proxy, "ana", "guess", **victim)
    assert locked.status_code == 429

    def refuse(*args: Any) -> Caller:
        raise AuthError("The user name or password is wrong, or the user is disabled.")

    monkeypatch.setattr(signin, "verify_password", refuse)

    async def send_flood() -> set[int]:
        # One event loop for all of it (a TestClient request costs ~7 ms of its own).
        transport = httpx.ASGITransport(app=served.app, client=("10.0.0.2", 40000))
        token, statuses = "flood-csrf-token", set()
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            for i in range(flood):
                c.cookies.clear()  # the double-submit cookie the form would have set
                res = await c.post(
                    "/login",
                    data={"username": f"flood{i}", "password": "x", "csrf": token},
                    headers={
                        "X-Forwarded-For": f"100.{64 + i // 65536}.{i // 256 % 256}.{i % 256}",
                        "Cookie": f"cw_login={token}",
                    },
                )
                statuses.add(res.status_code)
        return statuses

    statuses = asyncio.run(send_flood())
    assert statuses == {401}
    throttle = served.app.state.web.throttle
    assert throttle.entries() <= 3 * throttle_module.MAX_KEYS + 3  # bounded
    monkeypatch.setattr(signin, "verify_password", verify_password)
    still = _guess(proxy, "ana", PASSWORD, **victim)
    assert still.status_code == 429 and LOCKED_PAIR in still.text


def test_failed_api_tokens_are_limited_per_address(served: Served) -> None:
    guesser = _at(served, "192.0.2.80")
    answers = [
        guesser.get(
            "/receipts/receipts",
            headers={"Authorization": f"Bearer cw_{i:043d}", "X-Forwarded-For": f"10.1.1.{i}"},
        )
        for i in range(21)
    ]
    assert [r.status_code for r in answers] == [401] * 19 + [429] * 2
    assert _one_sentence(answers[-1]) == (
        "Too many bad API tokens from this address; try again in 5 minutes."
    )
    assert answers[-1].headers["retry-after"] == "300"
    good = {"Authorization": f"Bearer {served.token}"}
    assert guesser.get("/receipts/receipts", headers=good).status_code == 429  # locked is locked
    assert _at(served, "192.0.2.81").get("/receipts/receipts", headers=good).status_code == 200
    # No credential at all is no guess: a 401 saying what to send, whatever the count.
    assert _at(served, "192.0.2.82").get("/receipts/receipts").status_code == 401


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_casework_serve_on_loopback_ignores_rotating_x_forwarded_for(tmp_path) -> None:
    """The issue's attack as it was found: `casework serve` on loopback, where uvicorn itself
    would believe X-Forwarded-For from 127.0.0.1."""
    home = tmp_path / "home"
    make_served(home)  # users ana and bob
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "casework.cli", "serve", "--port", str(port)],
        env={**os.environ, "CASEWORK_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.3)
        with httpx.Client(base_url=base, timeout=30) as client:
            answers = []
            for i in range(12):
                form = client.get("/login")
                res = client.post(
                    "/login",
                    data={"username": "ana", "password": "guess", "csrf": csrf_of(form.text)},
                    headers={"X-Forwarded-For": f"10.0.0.{i}"},
                )
                answers.append(res.status_code)
            form = client.get("/login")
            right = client.post(
                "/login",
                data={"username": "ana", "password": PASSWORD, "csrf": csrf_of(form.text)},
                headers={"X-Forwarded-For": "10.9.9.9"},
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert answers == [401] * 4 + [429] * 8
    assert right.status_code == 429 and LOCKED_PAIR in right.text


# ---------------------------------------------------------------- part 6: bodies
HOSTILE = {
    "NaN": '{"hed": [NaN]}',
    "escaped surrogate": '{"hed": ["\\ud800"]}',
    "raw surrogate": '{"hed": ["\ud800"]}',
    "deep": '{"hed": ' + "[" * 5_000 + "]" * 5_000 + "}",
}
ENCODINGS = ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be")


def test_json_in_utf_16_or_utf_32_is_refused_with_415(served: Served) -> None:
    api = served.api()
    answers = {}
    for name, text in HOSTILE.items():
        for encoding in ENCODINGS:
            body = text.encode(encoding, "surrogatepass")
            res = api.post(
                "/hed/validate", content=body, headers={"content-type": "application/json"}
            )
            answers[name, encoding] = res.status_code
            assert "not UTF-8" in _one_sentence(res), (name, encoding)
    assert set(answers.values()) == {415}
    # UTF-8 with a byte-order mark is UTF-8: checked as usual.
    res = api.post(
        "/hed/validate",
        content=b"\xef\xbb\xbf" + HOSTILE["NaN"].encode(),
        headers={"content-type": "application/json"},
    )
    assert res.status_code == 422 and "NaN" in _one_sentence(res)


def test_the_guard_reads_the_content_type_the_route_reads(served: Served) -> None:
    """Two Content-Type headers: Starlette (and so the route) takes the first."""
    res = served.api().post(
        "/hed/validate",
        content=HOSTILE["NaN"].encode(),
        headers=[("content-type", "application/json"), ("content-type", "text/plain")],
    )
    assert res.status_code == 422 and "NaN" in _one_sentence(res)


def test_upload_names_are_reduced_to_a_safe_base_name(served: Served) -> None:
    api = served.api()
    pdf = INVOICE.read_bytes()
    for name in ("..", "a/..", "uploads/../..", "."):
        res = api.post("/documents/documents", files={"file": (name, pdf, "application/pdf")})
        assert res.status_code == 422, (name, res.status_code, res.text[:200])
        assert "send the file under its own name" in _one_sentence(res)
    long_name = "x" * 316 + ".pdf"  # 320 characters
    res = api.post("/documents/documents", files={"file": (long_name, pdf, "application/pdf")})
    assert res.status_code == 201, res.text[:300]
    assert res.json()["filename"] == "x" * 251 + ".pdf"
    res = api.post(
        "/documents/documents", files={"file": ("../../etc/cron.d/x.pdf", pdf, "application/pdf")}
    )
    assert res.status_code == 201 and res.json()["filename"] == "x.pdf"


JUNK_IDS = [
    "²".encode("latin-1"),  # a digit to str.isdigit once Starlette decodes it, not to int()
    "²".encode(),
    "٣".encode(),
    b"9" * 5_000,
    b"9" * 30,
    b"-1",
    b"1e5",
    b"0x10",
]


def _events(client: TestClient, url: str, last_id: bytes) -> tuple[int, list[str]]:
    seen = []
    with client.stream("GET", url, headers={"Last-Event-ID": last_id}) as res:
        if res.status_code != 200:
            return res.status_code, []
        for line in res.iter_lines():
            if line.startswith("data:"):
                seen.append(line)
                if '"complete": true' in line or '"status"' in line:
                    break
    return res.status_code, seen


class _ThreeSteps:
    app = "fake"

    def start_run(self, params: dict[str, str], caller: Caller) -> Any:
        def events() -> Any:
            for i in range(3):
                yield {"type": "text", "text": f"step {i}"}
            yield {"type": "complete", "items": []}

        return events()


def test_junk_last_event_ids_are_ignored_not_a_500(served: Served) -> None:
    # The web UI's live run stream.
    web = served.app.state.web
    run = web.runs.start(_ThreeSteps(), {}, Caller(1, "ana", Role.REVIEWER))
    for _ in range(200):
        if web.store.get(run.id).finished:
            break
        time.sleep(0.05)
    ana = served.client()
    assert sign_in(ana, "ana", PASSWORD).status_code == 303
    full = _events(ana, f"/runs/{run.id}/events", b"")
    assert full[0] == 200 and len(full[1]) == 5  # four events and the end
    for junk in JUNK_IDS:
        assert _events(ana, f"/runs/{run.id}/events", junk) == full, junk[:10]
    assert len(_events(ana, f"/runs/{run.id}/events", b"3")[1]) == 2  # a real id still counts

    # The documents API's run stream.
    api = served.api()
    doc = api.post("/documents/documents", files={"file": ("inv.pdf", INVOICE.read_bytes())})
    assert doc.status_code == 201, doc.text[:200]
    started = api.post(
        "/documents/extractions", json={"document_id": doc.json()["id"], "strategy": "rules"}
    )
    assert started.status_code == 202, started.text[:200]
    url = f"/documents/runs/{started.json()['run_id']}/events"
    full = _events(api, url, b"")
    assert full[0] == 200 and full[1]
    for junk in JUNK_IDS:
        assert _events(api, url, junk) == full, junk[:10]


def _multipart(size: int, marker: str = "") -> tuple[bytes, str]:
    boundary = "casework-probe"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="hed"\r\n\r\n{marker}'.encode()
        + b"a" * size
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def test_multipart_on_a_json_route_gets_the_body_limit_and_no_echo(served: Served) -> None:
    api = served.api()
    big, kind = _multipart(11 * MB)
    res = api.post("/hed/validate", content=big, headers={"content-type": kind})
    assert res.status_code == 413 and "(10 MB)" in _one_sentence(res)

    def chunks() -> Any:
        for i in range(0, len(big), MB):
            yield big[i : i + MB]

    res = api.post("/hed/validate", content=chunks(), headers={"content-type": kind})
    assert res.status_code == 413 and "(10 MB)" in _one_sentence(res)
    # Under the limit it is the route's 422, which names what is wrong and echoes nothing.
    marker = "ECHO-MARKER-"
    small, kind = _multipart(100_000, marker)
    res = api.post("/hed/validate", content=small, headers={"content-type": kind})
    assert res.status_code == 422 and marker not in res.text and len(res.content) < 1_000
    res = api.post("/hed/validate", json={"hed": marker + "a" * 100_000})
    assert res.status_code == 422 and marker not in res.text and len(res.content) < 1_000
    # Uploads keep their own, larger limit.
    upload = api.post(
        "/documents/documents", files={"file": ("big.pdf", b"%PDF" + b"0" * (11 * MB))}
    )
    assert upload.status_code != 413 and upload.status_code < 500


def test_a_user_without_a_session_table_row_cannot_forge_one(served: Served) -> None:
    """A signed cookie is not enough: only an id with a live row is a session."""
    from casework.web.session import encode_session

    forged = encode_session(served.app.state.web.secret, "A" * 43)
    assert _replayed(served, forged) == (303, "/login?next=%2F")
