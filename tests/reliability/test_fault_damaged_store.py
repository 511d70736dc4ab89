"""A damaged or unwritable store, through the real command and the real server.

- A truncated and a random-bytes ``casework.db``: every command tried answers one sentence
  naming the file and what to do (restore, `casework doctor`), exit 1, no traceback;
  `casework serve` refuses to start the same way.
- The file damaged under a running server: ``/health`` answers 503 naming the store (its
  file name, never its folder).
- `casework serve` on a read-only home: one sentence, exit non-zero.
- Under umask 022 the home is created 0700 and the database files 0600.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

COMMANDS = (["vanpool", "cases"], ["user", "list"], ["receipts", "list"], ["serve"])
READY_WITHIN_S = 90.0


def _cli(home: Path, *args: str, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "casework.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CASEWORK_HOME": str(home)},
        preexec_fn=None if umask is None else lambda: os.umask(umask),
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _one_sentence(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A home with a real, migrated and seeded database (checkpointed: a backup copy)."""
    home = tmp_path_factory.mktemp("seeded") / "home"
    out = _cli(home, "vanpool", "seed")
    assert out.returncode == 0, out.stderr
    return home / "casework.db"


@pytest.mark.parametrize("damage", ["truncated", "random bytes"])
def test_a_damaged_database_is_one_sentence_in_every_command(tmp_path, seeded, damage) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db = home / "casework.db"
    if damage == "truncated":
        shutil.copy(seeded, db)
        os.truncate(db, db.stat().st_size // 2)
    else:
        db.write_bytes(os.urandom(seeded.stat().st_size))
    reason = "database disk image is malformed" if damage == "truncated" else "file is not a"
    for command in COMMANDS:
        line = _one_sentence(_cli(home, *command))
        assert line.startswith(f"error: The database {db} is damaged"), (command, line)
        assert reason in line and line.endswith("then run `casework doctor`."), line


def test_health_answers_503_once_the_file_is_damaged_under_a_running_server(
    tmp_path, seeded
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(seeded, home / "casework.db")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "casework.cli", "serve", "--port", str(port)],
        env={**os.environ, "CASEWORK_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + READY_WITHIN_S
        while True:
            assert server.poll() is None and time.monotonic() < deadline
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        (home / "casework.db").write_bytes(os.urandom(seeded.stat().st_size))
        res = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert res.status_code == 503
    body = res.json()
    assert (body["status"], body["store"]) == ("unavailable", "casework.db")
    assert "`casework doctor`" in body["error"] and str(tmp_path) not in res.text


def _read_only(home: Path) -> list[str]:
    """The command prefix that runs `casework serve` on ``home`` made read-only: a read-only
    bind mount when we are root (root writes through any mode bits), else mode 0555."""
    if os.geteuid() != 0:
        home.chmod(0o555)
        return []
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: no way to make a folder read-only for root")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.decode().strip()}")
    script = f'mount --bind "{home}" "{home}" && mount -o remount,bind,ro "{home}" && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh"]


@pytest.mark.parametrize("holds", ["nothing", "a database"])
def test_serve_on_a_read_only_home_is_one_sentence(tmp_path, seeded, holds) -> None:
    home = tmp_path / "home"
    home.mkdir()
    if holds == "a database":
        shutil.copy(seeded, home / "casework.db")
    port = str(_free_port())
    out = subprocess.run(
        [*_read_only(home), sys.executable, "-m", "casework.cli", "serve", "--port", port],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CASEWORK_HOME": str(home)},
    )
    line = _one_sentence(out)
    assert line.startswith(f"error: The database {home}/casework.db cannot be opened or written")
    assert "set CASEWORK_HOME to a folder you can write" in line
    assert os.listdir(home) == (["casework.db"] if holds == "a database" else [])


def test_home_0700_and_database_files_0600_under_umask_022(tmp_path) -> None:
    home = tmp_path / "new-home"
    out = _cli(home, "vanpool", "seed", umask=0o022)
    assert out.returncode == 0, out.stderr
    # The seed's last connection closed: SQLite removed its -wal and -shm. Open them again.
    import sqlite3

    conn = sqlite3.connect(home / "casework.db")
    conn.execute("SELECT count(*) FROM vanpool_vanpools").fetchall()
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in home.iterdir()}
    conn.close()
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert modes == {"casework.db": 0o600, "casework.db-shm": 0o600, "casework.db-wal": 0o600}
