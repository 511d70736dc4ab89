"""A run killed mid-way (process exit) resumes from its SQLite checkpoint in a new process."""

import subprocess
import sys
from pathlib import Path

BODY = Path(__file__).with_name("_killed_run.py")


def test_killed_run_resumes_from_sqlite_checkpoint(tmp_path):
    db = tmp_path / "ckpt.sqlite"
    died = subprocess.run(
        [sys.executable, BODY, db, "die"], capture_output=True, text=True, timeout=120
    )
    assert died.returncode == 17, died.stderr
    resumed = subprocess.run(
        [sys.executable, BODY, db, "resume"], capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    lines = resumed.stdout.strip().splitlines()
    assert lines[0] == "resumed-from 3"  # human, the first tool call, its result
    assert (
        lines[1] == "submit VALID get_order_status,get_customer,submit_decision"
    )  # one trajectory, no repeated step
