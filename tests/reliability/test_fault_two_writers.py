"""Two `casework receipts import` processes writing one CASEWORK_HOME at once: each succeeds, or
says in one sentence that the store is busy and exits 75; never a traceback, and an import
lands whole or not at all (a refused one lands whole when run again)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from casework import cli
from casework.apps.receipts.deps import build_deps
from casework.config import Settings
from casework.errors import ConfigError

RECEIPTS = 40
"""Per import: enough that the two write transactions overlap."""
BUSY = {
    "The database is busy: another casework command or server has held its write lock for too "
    "long; run this again once that one has finished.",
    "The database is being set up by another casework command started at the same time; run "
    "this again once that one has finished.",
}


def _receipts(folder: Path, side: str) -> list[Path]:
    """RECEIPTS labelled receipt files whose keys are ``side#i``."""
    folder.mkdir(parents=True)
    paths = []
    for i in range(RECEIPTS):
        tokens = [f"{side.upper()}MART{i}", "MILK", "4.99", "TOTAL", "4.99"]
        data = {
            "tokens": tokens,
            "bboxes": [[10 + 60 * j, 900, 60 + 60 * j, 912] for j in range(len(tokens))],
            "ner_tags": ["B-MERCHANT_NAME", "B-PRODUCT_NAME", "B-LINE_TOTAL", "O", "B-GRAND_TOTAL"],
            "merchant_name": f"{side} mart {i}",
            "receipt_key": f"{side}#{i}",
        }
        # Distinct file names: a receipt's slug comes from its file name, and two imports of
        # same-named files can pick the same free slug (the receipts repository checks, then
        # inserts in a later transaction): a known race, not what this test is about.
        path = folder / f"{side}-r{i}.labels.json"
        path.write_text(json.dumps(data))
        paths.append(path)
    return paths


def _start(home: Path, files: list[Path]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "casework.cli", "receipts", "import", "--no-index", "--json"]
        + [str(f) for f in files],
        env={**os.environ, "CASEWORK_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _images(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT image_id, count(*) FROM receipts_receipts GROUP BY image_id"
        ).fetchall()
    return dict(rows)


def _race(home: Path, sides: dict[str, list[Path]]) -> dict[str, bool]:
    """Both imports at once; whether each one landed. Asserts what a refusal looks like."""
    running = {side: _start(home, files) for side, files in sides.items()}
    landed = {}
    for side, proc in running.items():
        out, err = proc.communicate(timeout=240)
        assert "Traceback" not in err, err
        if proc.returncode == 0:
            assert len(json.loads(out)["added"]) == RECEIPTS, out
            landed[side] = True
        else:
            lines = err.strip().splitlines()
            assert proc.returncode == cli.BUSY_EXIT, err
            assert len(lines) == 1 and lines[0].removeprefix("error: ") in BUSY, err
            landed[side] = False
    images = _images(home / "casework.db")
    for side, ok in landed.items():  # whole or nothing
        assert images.get(side, 0) == (RECEIPTS if ok else 0), (side, images)
    return landed


@pytest.mark.slow
def test_two_imports_into_a_set_up_home_both_land(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_deps(Settings(home=home, allow_network_models=False), with_vectors=False)
    sides = {side: _receipts(tmp_path / side, side) for side in ("a", "b")}
    landed = _race(home, sides)
    # With the tables made, the second writer waits for the first (WAL, a busy timeout).
    assert landed == {"a": True, "b": True}
    with sqlite3.connect(home / "casework.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@pytest.mark.slow
def test_two_first_imports_into_a_fresh_home_land_or_say_busy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sides = {side: _receipts(tmp_path / side, side) for side in ("a", "b")}
    landed = _race(home, sides)
    for side, ok in landed.items():
        if not ok:  # refused while the other one made the tables: now it lands
            again = _start(home, sides[side])
            _, err = again.communicate(timeout=240)
            assert again.returncode == 0, err
    assert _images(home / "casework.db") == {"a": RECEIPTS, "b": RECEIPTS}


# ------------------------------------------------------------ the sentence, without a race
def _fail_with(monkeypatch: pytest.MonkeyPatch, exc: Exception) -> None:
    def deps(**_: object) -> None:
        raise exc

    monkeypatch.setattr("casework.apps.receipts.cli.edge_cases.open_deps", deps)


def test_a_locked_database_is_one_sentence_and_exit_75(monkeypatch, capsys) -> None:
    locked = OperationalError("INSERT INTO x", {}, sqlite3.OperationalError("database is locked"))
    race = ConfigError("The database at sqlite:///x is not reachable: table t already exists.")
    race.__cause__ = OperationalError("CREATE TABLE t", {}, sqlite3.OperationalError("x"))
    race.__cause__.orig = sqlite3.OperationalError("table t already exists")
    for exc in (locked, race):
        _fail_with(monkeypatch, exc)
        with pytest.raises(SystemExit) as exit_:
            cli.main(["receipts", "edge-cases", "list"])
        assert exit_.value.code == cli.BUSY_EXIT
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.removeprefix("error: ") in BUSY, err
    # Anything else from the database is not called busy.
    other = OperationalError("SELECT", {}, sqlite3.OperationalError("no such table: t"))
    _fail_with(monkeypatch, other)
    with pytest.raises(OperationalError):
        cli.main(["receipts", "edge-cases", "list"])
