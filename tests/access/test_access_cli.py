"""`casework user` and `casework token` end to end: JSON on stdout, the token printed once,
one sentence and exit 2 on a mistake."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _cli(home, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "casework.cli", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env={**os.environ, "CASEWORK_HOME": str(home)},
    )


def test_users_and_tokens_from_the_command_line(tmp_path):
    home = tmp_path / "home"
    added = _cli(
        home, "user", "add", "ana", "--role", "reviewer", "--password-stdin", stdin="s3cret-pw\n"
    )
    assert added.returncode == 0, added.stderr
    assert "added user ana (id 1, role reviewer, with password)" in added.stdout
    duplicate = _cli(home, "user", "add", "ana")
    assert duplicate.returncode == 2
    assert duplicate.stderr.strip() == "error: A user named 'ana' already exists."
    bad_role = _cli(home, "user", "add", "bob", "--role", "boss")
    assert bad_role.returncode == 2 and "Unknown role 'boss'" in bad_role.stderr
    assert "Traceback" not in bad_role.stderr

    created = _cli(home, "token", "create", "ana", "--expires-days", "7")
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("cw_") and len(token) == 46 and "\n" not in token
    assert "copy it now, it is not shown again" in created.stderr

    listed = json.loads(_cli(home, "token", "list", "ana", "--json").stdout)
    assert [(t["id"], t["prefix"], t["status"]) for t in listed] == [(1, token[:10], "active")]
    assert token not in json.dumps(listed)

    revoked = _cli(home, "token", "revoke", token[:10])
    assert revoked.returncode == 0 and f"revoked token 1 ({token[:10]}…) of ana" in revoked.stdout
    listed = json.loads(_cli(home, "token", "list", "ana", "--json").stdout)
    assert listed[0]["status"] == "revoked"

    assert _cli(home, "user", "disable", "ana").returncode == 0
    users = json.loads(_cli(home, "user", "list", "--json").stdout)
    assert [(u["name"], u["role"], u["disabled"], u["has_password"]) for u in users] == [
        ("ana", "reviewer", True, True)
    ]
    refused = _cli(home, "serve", "--host", "0.0.0.0")
    assert refused.returncode == 2
    assert "add one with `casework user add NAME --role admin`" in refused.stderr
