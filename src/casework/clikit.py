"""What every ``casework`` command group shares: consoles, ``--json`` printing, the common
options and one progress-bar factory.

The contract for machine-readable output: under ``--json`` stdout carries exactly one JSON
document (:func:`print_json`); progress bars, notices and warnings go to stderr
(:data:`err_console`, :func:`progress`). Progress is drawn only on a terminal and never after
``--no-progress``.

Options are ``Annotated`` types, so a command declares them once with its own default::

    def run(limit: LimitOption = None, concurrency: ConcurrencyOption = 4,
            as_json: JsonOption = False, no_progress: NoProgressOption = False) -> None: ...
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

if TYPE_CHECKING:
    from casework.config import Settings
    from casework.runtime.context import Caller

__all__ = [
    "AddressOption",
    "ConcurrencyOption",
    "ExecutorOption",
    "JsonOption",
    "LimitOption",
    "ModelOption",
    "NoProgressOption",
    "caller_named",
    "console",
    "err_console",
    "mount_user_add",
    "print_json",
    "progress",
    "progress_enabled",
    "read_password",
    "set_progress",
]

console = Console(soft_wrap=True)
"""Human-readable output (stdout). Never used for a command's ``--json`` output."""
err_console = Console(stderr=True, soft_wrap=True)
"""Errors, warnings, notices and progress (stderr)."""

# Process-wide switch: `--no-progress` on any command also silences bars drawn deep inside
# the platform (e.g. joining the bundled model on first use).
_progress_on = True


def set_progress(enabled: bool) -> None:
    """Turn every progress bar of this process on or off."""
    global _progress_on
    _progress_on = enabled


def progress_enabled() -> bool:
    """True when a bar would be drawn: not switched off, and stderr is a terminal."""
    return _progress_on and err_console.is_terminal


def _no_progress_callback(value: bool) -> bool:
    if value:
        set_progress(False)
    return value


def caller_named(name: str, settings: Settings | None = None) -> Caller:
    """The enabled user ``name`` as a tenant, for an operator's command that acts for a user
    (``receipts import --user NAME``): apps get a ``Caller`` here, never from casework.access."""
    from casework.access.service import get_user, open_access
    from casework.errors import InputError
    from casework.runtime.context import Caller

    user = get_user(open_access(settings), name)  # NotFoundError names `casework user list`
    if user.disabled:
        raise InputError(f"User {name!r} is disabled; enable it or name another user.")
    return Caller(user_id=user.id, name=user.name, role=user.role)


def print_json(data: Any) -> None:
    """``data`` as one JSON document on stdout, plain (no Rich markup), for ``--json``."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    sys.stdout.flush()


def progress(*columns: ProgressColumn | str, enabled: bool = True) -> Progress:
    """A Rich progress bar on stderr; drawn only when ``enabled``, not switched off by
    ``--no-progress`` and stderr is a terminal (otherwise every call is a silent no-op).

    Default columns: description, bar, done/total, elapsed time.
    """
    if not columns:
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
    return Progress(
        *columns,
        console=err_console,
        disable=not (enabled and progress_enabled()),
    )


JsonOption = Annotated[
    bool, typer.Option("--json", help="Print one JSON document on stdout (progress on stderr).")
]
NoProgressOption = Annotated[
    bool,
    typer.Option(
        "--no-progress",
        help="Draw no progress bars (they go to stderr, and only on a terminal).",
        callback=_no_progress_callback,
    ),
]
LimitOption = Annotated[
    int | None, typer.Option("--limit", "-n", min=1, help="Only the first N items.")
]
ConcurrencyOption = Annotated[
    int, typer.Option("--concurrency", "-c", min=1, help="Items in flight at once.")
]
ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor", help="Where items run: local (worker threads) or ray (a Ray cluster)."
    ),
]
AddressOption = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="The Ray cluster (HOST:PORT) for --executor ray; a local Ray when omitted.",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="provider:name, e.g. openai:gpt-4o-mini (default: settings)."
    ),
]


def read_password() -> str:
    """The first line of stdin, so scripts can pipe a password without it showing in `ps`."""
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        from casework.errors import InputError

        raise InputError("--password-stdin read nothing; pipe the password in, one line.")
    return line


def _user_add(
    name: str = typer.Argument(..., help="Unique user name."),
    role: str = typer.Option("user", help="user, reviewer (decides reviews) or admin."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read a web sign-in password from stdin."
    ),
) -> None:
    """Add a user. Then give them a token with `casework token create NAME`."""
    from casework.access.service import create_user, open_access
    from casework.config import get_settings

    password = read_password() if password_stdin else None
    user = create_user(open_access(get_settings()), name, role, password=password)
    console.print(
        f"[green]added[/] user {user.name} (id {user.id}, role {user.role}"
        f"{', with password' if user.has_password else ''})",
        highlight=False,
    )


def mount_user_add(group: typer.Typer) -> None:
    """Mount the platform's one ``user add`` on a ``user`` group: ``casework user`` and an
    app's own ``user`` group (which reaches it without importing ``casework.access``)."""
    group.command("add")(_user_add)
