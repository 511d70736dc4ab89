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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

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
    "LazyCommand",
    "LazyGroup",
    "LimitOption",
    "ModelOption",
    "NoProgressOption",
    "Users",
    "byte_progress",
    "caller_named",
    "console",
    "err_console",
    "lazy_group",
    "mount_user_add",
    "print_json",
    "progress",
    "progress_enabled",
    "read_password",
    "set_progress",
    "use_users",
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


@dataclass(frozen=True)
class Users:
    """The platform's users as an app's CLI needs them. ``casework.access.cli`` hands them in
    (``use_users``) when it loads, so clikit, and the apps through it, never import access."""

    caller_named: Callable[[str, Settings | None], Caller]
    """The enabled user NAME as a tenant; one sentence when unknown or disabled."""
    add: Callable[[str, str, str | None], str]
    """Adds (name, role, password or None); returns the sentence to print."""


_users: Users | None = None


def use_users(users: Users) -> None:
    global _users
    _users = users


def _the_users() -> Users:
    if _users is None:
        from casework.errors import ConfigError

        raise ConfigError(
            "No user directory is loaded: run this through the `casework` command, which "
            "loads casework.access."
        )
    return _users


def caller_named(name: str, settings: Settings | None = None) -> Caller:
    """The enabled user ``name`` as a tenant, for an operator's command that acts for a user
    (``receipts import --user NAME``): apps get a ``Caller`` here, never from casework.access."""
    return _the_users().caller_named(name, settings)


def _user_add(
    name: str = typer.Argument(..., help="Unique user name."),
    role: str = typer.Option("user", help="user, reviewer (decides reviews) or admin."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read a web sign-in password from stdin."
    ),
) -> None:
    """Add a user. Then give them a token with `casework token create NAME`."""
    password = read_password() if password_stdin else None
    console.print(_the_users().add(name, role, password), highlight=False)


def mount_user_add(group: typer.Typer) -> None:
    """Mount the platform's one ``user add`` on a ``user`` group: ``casework user`` and an
    app's own ``user`` group (which reaches it without importing ``casework.access``)."""
    group.command("add")(_user_add)


@contextmanager
def byte_progress(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """A byte-counting bar on stderr for a long copy (the bundled model's join); yields the
    function that advances it by a number of bytes."""
    from rich.progress import DownloadColumn, TimeRemainingColumn, TransferSpeedColumn

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn())
    with progress(*columns, TransferSpeedColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.advance(task, done)


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


@dataclass(frozen=True)
class LazyCommand:
    """A sub-command known by name and help at start-up and built only when it runs."""

    help: str
    load: Callable[[], Any]
    """Returns the Typer app of a group, or the function of a single command."""


class LazyGroup(typer.core.TyperGroup):
    """A group whose ``--help`` lists its lazy sub-commands from their :class:`LazyCommand`
    help, without importing them: a sub-command's module (and whatever it imports) loads when
    that sub-command is resolved, so ``casework --help`` and usage errors answer at once."""

    entries: ClassVar[Callable[[], Mapping[str, LazyCommand]]] = dict
    lazy_first: ClassVar[bool] = False
    """List the lazy sub-commands before the group's own (``--help``'s order)."""
    # The commands loaded so far, shared by every group built from the same Typer app.
    loaded: ClassVar[dict[str, Any]] = {}

    def _lazy(self) -> Mapping[str, LazyCommand]:
        return {n: c for n, c in type(self).entries().items() if n not in self.commands}

    def list_commands(self, ctx: Any) -> list[str]:
        own, lazy = super().list_commands(ctx), list(self._lazy())
        return [*lazy, *own] if self.lazy_first else [*own, *lazy]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands or cmd_name in self.loaded:
            return self.commands.get(cmd_name) or self.loaded[cmd_name]
        entry = self._lazy().get(cmd_name)
        # what --help lists: the name and its help, not the command itself
        return None if entry is None else typer.core.TyperCommand(cmd_name, help=entry.help)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] in self._lazy():
            self.load(args[0])
        return super().resolve_command(ctx, args)

    def load(self, name: str) -> Any:
        """The click command ``name``, imported and built now (once per process)."""
        if name in self.commands:
            return self.commands[name]
        if name not in self.loaded:
            entry = type(self).entries()[name]
            holder = typer.Typer()
            target = entry.load()
            if isinstance(target, typer.Typer):
                holder.add_typer(target, name=name, help=entry.help)
            else:
                holder.command(name, help=entry.help)(target)
                holder.callback()(lambda: None)  # a group, so the command keeps its name
            self.loaded[name] = typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]
        self.add_command(self.loaded[name], name)
        return self.loaded[name]


def lazy_group(
    entries: Callable[[], Mapping[str, LazyCommand]], *, first: bool = False
) -> type[LazyGroup]:
    """A :class:`LazyGroup` class for ``typer.Typer(cls=...)`` with these lazy sub-commands
    (listed before the group's own when ``first``)."""
    attrs = {"entries": staticmethod(entries), "loaded": {}, "lazy_first": first}
    return type("LazyGroup", (LazyGroup,), attrs)
