"""kill -9 at random points while 6 clients post vanpool replies, over many rounds on one home.

Each round starts a server on the same home, six clients post questions to the open cases
(the rules route each to an answer email; the case keeps waiting, so replies keep coming),
and the server is killed with SIGKILL at a random moment. The rounds' servers are forked
from one parent that imported the server once (``_fork_server``): twenty `casework serve`
starts would take minutes of imports on a shared 2-core machine. Afterwards a tick on
`casework serve` picks up every reply a kill left ``received``. Then, on the file: the integrity
check passes, no reply is still ``received``, every handled reply has its audit row, every
reply led to exactly one answer email, and every email has its audit row.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from casework.access import create_token, create_user, open_access
from casework.apps.vanpool import lifecycle
from casework.apps.vanpool.deps import build_deps
from casework.apps.vanpool.roster import import_roster
from casework.apps.vanpool.settings import VanpoolSettings
from casework.apps.vanpool.synth import DATA_DIR
from casework.config import Settings

pytestmark = pytest.mark.slow

ROUNDS = 20
CLIENTS = 6
CASES = 8
KILL_WITHIN_S = (0.05, 1.5)
"""The kill comes this long after the first reply of the round was acknowledged."""
READY_WITHIN_S = 90.0
QUESTION = "When does the van leave on Fridays?"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Sink:
    """A real SMTP server on loopback that counts the Message-IDs it accepts."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.received: Counter[str] = Counter()
        self.controller = None

    async def handle_DATA(self, server, session, envelope) -> str:
        from email.parser import BytesParser
        from email.policy import default

        msg = BytesParser(policy=default).parsebytes(envelope.original_content or envelope.content)
        self.received[str(msg["X-Casework-Message"])] += 1
        return "250 OK"

    def __enter__(self) -> _Sink:
        from aiosmtpd.controller import Controller

        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.controller is not None
        self.controller.stop()


def _seed(home: Path, smtp_port: int) -> tuple[str, list[str]]:
    """The bundled roster, CASES open cases (audited by the rules, outreach sent), and a
    reviewer's token."""
    settings = Settings(home=home, allow_network_models=False)
    deps = build_deps(settings, app=VanpoolSettings(smtp_port=smtp_port))
    import_roster(deps.repo, DATA_DIR / "roster.json", deps.now())
    truth = json.loads((DATA_DIR / "injected.json").read_text())
    cases = []
    for t in truth:
        if t["scenario"] != "clean" and len(cases) < CASES:
            result, _ = lifecycle.audit_vanpool(deps, t["vanpool_id"])
            assert result.case_id is not None
            cases.append(result.case_id)
    deps.repo.engine.dispose()
    access = open_access(settings)
    create_user(access, "rev", "reviewer")
    _, token = create_token(access, "rev")
    access.dispose()
    return token, cases


def _env(home: Path, smtp_port: int) -> dict[str, str]:
    return {
        **os.environ,
        "CASEWORK_HOME": str(home),
        "CASEWORK_VANPOOL__SMTP_PORT": str(smtp_port),
    }


def _serve(home: Path, port: int, smtp_port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "casework.cli", "serve", "--port", str(port)],
        env=_env(home, smtp_port),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


class _Forks:
    """The parent of the rounds' servers (``_fork_server``)."""

    def __init__(self, home: Path, smtp_port: int) -> None:
        self.parent = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("_fork_server.py"))],
            env=_env(home, smtp_port),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def start(self, port: int) -> int:
        assert self.parent.stdin is not None and self.parent.stdout is not None
        self.parent.stdin.write(f"{port}\n")
        self.parent.stdin.flush()
        return int(self.parent.stdout.readline())

    def close(self) -> None:
        assert self.parent.stdin is not None
        self.parent.stdin.close()
        self.parent.wait(timeout=30)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 30
    while _alive(pid):
        assert time.monotonic() < deadline, f"server {pid} outlived SIGKILL"
        time.sleep(0.01)


def _wait_ready(server: subprocess.Popen[bytes] | int, port: int) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        if isinstance(server, int):
            assert _alive(server), f"server {server} died before answering"
        else:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the server did not answer /health within {READY_WITHIN_S} s")


def _round(
    forks: _Forks, token: str, cases: list[str], rng: random.Random
) -> tuple[list[str], list[str]]:
    """One round: serve, post replies from CLIENTS threads, SIGKILL at a random moment.
    Returns the answer emails acknowledged, and unexpected answers."""
    port = _free_port()
    acked: list[str] = []
    unexpected: list[str] = []
    lock = threading.Lock()
    first_ack = threading.Event()
    stop = threading.Event()

    def post(seed: float) -> None:
        mine = random.Random(seed)
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as c:
            while not stop.is_set():
                case_id = mine.choice(cases)
                try:
                    res = c.post(
                        f"/vanpool/cases/{case_id}/replies",
                        json={"text": QUESTION, "strategy": "rules"},
                    )
                except httpx.TransportError:
                    return  # killed: this reply's fate is unknown
                with lock:
                    if res.status_code == 200 and res.json()["outreach"]["message_id"]:
                        acked.append(res.json()["outreach"]["message_id"])
                    else:
                        unexpected.append(f"{case_id}: {res.status_code} {res.text[:600]}")
                first_ack.set()

    threads = [threading.Thread(target=post, args=(rng.random(),)) for _ in range(CLIENTS)]
    server = forks.start(port)
    try:
        _wait_ready(server, port)
        for t in threads:
            t.start()
        assert first_ack.wait(READY_WITHIN_S), "no reply was acknowledged"
        time.sleep(rng.uniform(*KILL_WITHIN_S))
    finally:
        os.kill(server, signal.SIGKILL)
        _wait_gone(server)
        stop.set()
        for t in threads:
            if t.is_alive():
                t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    return acked, unexpected


def _tick(home: Path, smtp_port: int, token: str) -> dict:
    port = _free_port()
    server = _serve(home, port, smtp_port)
    try:
        _wait_ready(server, port)
        res = httpx.post(
            f"http://127.0.0.1:{port}/vanpool/tick",
            json={"strategy": "rules"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        assert res.status_code == 200, res.text
        return res.json()
    finally:
        server.terminate()
        server.wait(timeout=30)


def _rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_sigkill_under_reply_load_leaves_every_reply_untouched_or_whole(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = home / "casework.db"
    rng = random.Random(30)
    acked: list[str] = []
    with _Sink() as sink:
        token, cases = _seed(home, sink.port)
        outreach = {m for (m,) in _rows(db, "SELECT message_id FROM vanpool_messages")}
        forks = _Forks(home, sink.port)
        try:
            for _ in range(ROUNDS):
                got, unexpected = _round(forks, token, cases, rng)
                assert not unexpected, "\n".join(unexpected)
                acked += got
                # The file as the kill left it (the WAL not yet checkpointed into it).
                assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
        finally:
            forks.close()
        stuck_before = _rows(db, "SELECT count(*) FROM vanpool_messages WHERE status = 'received'")[
            0
        ][0]
        ticked = _tick(home, sink.port, token)
        delivered = dict(sink.received)

    inbound = _rows(
        db,
        "SELECT m.message_id, m.status, t.thread_id FROM vanpool_messages m "
        "JOIN vanpool_email_threads t ON t.id = m.thread_pk WHERE m.direction = 'inbound'",
    )
    outbound = _rows(
        db,
        "SELECT m.message_id, t.thread_id FROM vanpool_messages m "
        "JOIN vanpool_email_threads t ON t.id = m.thread_pk WHERE m.direction = 'outbound'",
    )
    audit = [
        (action, json.loads(detail))
        for action, detail in _rows(db, "SELECT action, detail FROM vanpool_audit_log")
    ]
    classified = Counter(d["message_id"] for a, d in audit if a == "reply_classified")
    emailed = {d["message_id"] for a, d in audit if a in ("email_queued", "email_sent")}
    replies = Counter(thread for _, _, thread in inbound)
    answers = Counter(thread for m, thread in outbound if m not in outreach)
    recorded = {m for m, _ in outbound}
    findings = {
        "integrity_check": _rows(db, "PRAGMA integrity_check")[0][0],
        "replies stuck after the tick": sum(status != "handled" for _, status, _ in inbound),
        "replies handled without an audit row": sum(
            status == "handled" and m not in classified for m, status, _ in inbound
        ),
        "replies with two audit rows": sum(n > 1 for n in classified.values()),
        # One answer per reply, per thread (the outreach email aside): none queued twice.
        "answers queued beyond one per reply": sum(
            max(0, answers[t] - replies[t]) for t in answers | replies
        ),
        "replies without their answer": sum(
            max(0, replies[t] - answers[t]) for t in answers | replies
        ),
        "emails without an audit row": len(recorded - emailed),
        "acknowledged answers missing": len(set(acked) - recorded),
        "emails mailed but not recorded": len(set(delivered) - recorded),
    }
    assert len(inbound) >= ROUNDS * CLIENTS  # the rounds did post replies
    assert findings == {"integrity_check": "ok"} | dict.fromkeys(list(findings)[1:], 0)
    assert stuck_before == len(ticked["replies"])  # the tick took every one
