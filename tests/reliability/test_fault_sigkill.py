"""`casework serve` killed with SIGKILL while clients write, then started again on the same home:
the SQLite file passes its integrity check, every write the server acknowledged is there, and
no decision is half-written.

The writes are of two kinds: creating a document stack (one row) and accepting a receipts
label suggested as a replacement (two rows in one transaction: the suggestion becomes VALID,
the label it would replace INVALID). The kill comes once some writes were acknowledged and
others are in flight; a request the kill cut off may have landed or not, but never half.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from casework.access import create_token, create_user, open_access
from casework.apps.receipts.dataset import CONFUSIONS
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.models import ValidationStatus
from casework.apps.receipts.repository import LabelChange
from casework.apps.receipts.service import seed
from casework.config import Settings

pytestmark = pytest.mark.slow

SUGGESTIONS = 40
STACKS = 40
WORKERS = 6
KILL_AFTER = 20
"""Acknowledged writes before the kill (the rest are queued or in flight)."""
READY_WITHIN_S = 90.0
"""How long a starting server may take to answer /health (a bound, not a measurement)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _seed(home: Path) -> tuple[str, list[tuple[int, int]]]:
    """Receipts with SUGGESTIONS replacement labels waiting for review, and a reviewer's
    token; returns the token and (suggestion id, label it would replace) pairs."""
    settings = Settings(home=home, allow_network_models=False)
    deps = build_deps(settings, with_vectors=False)
    seed(deps, index=False)
    olds, words = [], set()
    for label in deps.repo.current_labels():
        if label.label_type in CONFUSIONS and label.word_pk not in words:
            olds.append(label)
            words.add(label.word_pk)
    assert len(olds) >= SUGGESTIONS
    suggested = deps.repo.append_labels(
        [
            LabelChange(
                word_pk=old.word_pk,
                label_type=CONFUSIONS[old.label_type][0],
                status=ValidationStatus.NEEDS_REVIEW,
                proposed_by="sigkill-test",
                reasoning="Suggested by the fault test.",
                consolidated_from_id=old.id,
            )
            for old in olds[:SUGGESTIONS]
        ]
    )
    deps.repo.engine.dispose()
    access = open_access(settings)
    create_user(access, "rev", "reviewer")
    _, token = create_token(access, "rev")
    access.dispose()
    return token, [(s.id, old.id) for s, old in zip(suggested, olds, strict=False)]


def _serve(home: Path, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "casework.cli", "serve", "--port", str(port)],
        env={**os.environ, "CASEWORK_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_ready(server: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"the server did not answer /health within {READY_WITHIN_S} s")


def _rows_replacing(db: Path, label_ids: list[int]) -> dict[int, int]:
    with sqlite3.connect(db) as conn:
        marks = ",".join("?" * len(label_ids))
        found = conn.execute(
            f"SELECT replaces_id, count(*) FROM receipts_labels WHERE replaces_id IN ({marks}) "
            "GROUP BY replaces_id",
            label_ids,
        ).fetchall()
    return {i: 0 for i in label_ids} | dict(found)


def test_sigkill_under_write_load_loses_no_acknowledged_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    token, pairs = _seed(home)
    db = home / "casework.db"
    port = _free_port()
    server = _serve(home, port)
    try:
        _wait_ready(server, port)
        base = f"http://127.0.0.1:{port}"
        tasks: list[tuple[str, str]] = [("accept", str(sid)) for sid, _ in pairs]
        tasks += [("stack", f"stack-{i}") for i in range(STACKS)]
        tasks = tasks[::2] + tasks[1::2]  # both kinds interleaved
        acked_labels: set[int] = set()
        acked_stacks: dict[str, int] = {}
        unexpected: list[str] = []
        lock = threading.Lock()
        enough = threading.Event()

        def work(mine: list[tuple[str, str]]) -> None:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
                for kind, value in mine:
                    try:
                        if kind == "accept":
                            res = client.post(f"/receipts/review/{value}/accept")
                        else:
                            res = client.post("/documents/stacks", json={"name": value})
                    except httpx.TransportError:
                        return  # the server is gone: this write's fate is unknown
                    with lock:
                        if res.is_success and kind == "accept":
                            acked_labels.add(int(value))
                        elif res.is_success:
                            acked_stacks[value] = res.json()["id"]
                        else:
                            unexpected.append(f"{kind} {value}: {res.status_code} {res.text}")
                        if len(acked_labels) + len(acked_stacks) >= KILL_AFTER:
                            enough.set()
            enough.set()  # ran out of work (a fast server): kill anyway

        threads = [threading.Thread(target=work, args=(tasks[i::WORKERS],)) for i in range(WORKERS)]
        for t in threads:
            t.start()
        assert enough.wait(READY_WITHIN_S), "no writes were acknowledged"
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
        assert not unexpected, unexpected
        assert len(acked_labels) + len(acked_stacks) >= KILL_AFTER
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=30)

    # The file as the kill left it (the WAL not yet checkpointed into it).
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []

    port = _free_port()
    again = _serve(home, port)
    try:
        _wait_ready(again, port)
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as client:
            stacks = {s["name"]: s["id"] for s in client.get("/documents/stacks").json()}
            queue = {item["id"] for item in client.get("/receipts/review").json()}
            # The restarted server takes writes.
            assert client.post("/documents/stacks", json={"name": "after"}).status_code == 201
    finally:
        again.terminate()
        again.wait(timeout=30)

    assert acked_stacks.items() <= stacks.items()
    assert not acked_labels & queue  # an acknowledged accept is no longer waiting
    suggestion_rows = _rows_replacing(db, [sid for sid, _ in pairs])
    old_rows = _rows_replacing(db, [old for _, old in pairs])
    for sid, old in pairs:
        decided = (suggestion_rows[sid], old_rows[old])
        assert decided in ((0, 0), (1, 1)), f"suggestion {sid} half-written: {decided}"
        assert (decided == (1, 1)) == (sid not in queue), sid
        if sid in acked_labels:
            assert decided == (1, 1), sid
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
