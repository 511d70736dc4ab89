"""``casework user`` and ``casework token``: who may call the API, and with which token."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from casework.clikit import Users, mount_user_add, print_json, read_password, use_users

if TYPE_CHECKING:
    from casework.config import Settings
    from casework.runtime.context import Caller

__all__ = ["caller_named", "token_app", "user_app"]

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

user_app = typer.Typer(
    help="Users who may call the API: `casework user add ana --role reviewer`.",
    no_args_is_help=True,
)
token_app = typer.Typer(
    help="API tokens: `casework token create ana`, then send 'Authorization: Bearer TOKEN'.",
    no_args_is_help=True,
)


def _engine() -> Any:
    from casework.access.service import open_access
    from casework.config import get_settings

    return open_access(get_settings())


def caller_named(name: str, settings: Settings | None = None) -> Caller:
    """The enabled user ``name`` as a tenant, for an operator's command that acts for a user
    (``receipts import --user NAME``); apps reach it through ``clikit.caller_named``."""
    from casework.access.service import get_user, open_access
    from casework.errors import InputError
    from casework.runtime.context import Caller

    user = get_user(open_access(settings), name)  # NotFoundError names `casework user list`
    if user.disabled:
        raise InputError(f"User {name!r} is disabled; enable it or name another user.")
    return Caller(user_id=user.id, name=user.name, role=user.role)


def _add_user(name: str, role: str, password: str | None) -> str:
    from casework.access.service import create_user, open_access
    from casework.config import get_settings

    user = create_user(open_access(get_settings()), name, role, password=password)
    return (
        f"[green]added[/] user {user.name} (id {user.id}, role {user.role}"
        f"{', with password' if user.has_password else ''})"
    )


use_users(Users(caller_named=caller_named, add=_add_user))
mount_user_add(user_app)  # `casework user add`: the one command apps mount too


@user_app.command("list")
def user_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List users with their role and whether they are disabled."""
    from casework.access.service import list_users

    users = list_users(_engine())
    if as_json:
        print_json([u.to_dict() for u in users])
        return
    if not users:
        console.print("no users yet: add one with `casework user add NAME --role admin`")
        return
    table = Table("id", "name", "role", "status", "password", "created")
    for u in users:
        table.add_row(
            str(u.id),
            u.name,
            str(u.role),
            "disabled" if u.disabled else "active",
            "yes" if u.has_password else "no",
            f"{u.created_at:%Y-%m-%d %H:%M}",
        )
    console.print(table)


@user_app.command("disable")
def user_disable(name: str = typer.Argument(..., help="The user to disable.")) -> None:
    """Disable a user: all their tokens stop working and their web sessions end at once."""
    from casework.access.service import disable_user

    user = disable_user(_engine(), name)
    console.print(
        f"[yellow]disabled[/] user {user.name}; their tokens and web sessions no longer work"
    )


@user_app.command("password")
def user_password(
    name: str = typer.Argument(..., help="Whose web sign-in password to set."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from stdin (else it is prompted)."
    ),
) -> None:
    """Set a user's web sign-in password; every web session of theirs ends."""
    from casework.access.service import set_password

    if password_stdin:
        password = read_password()
    else:
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    set_password(_engine(), name, password)
    console.print(f"[green]set[/] the password of {name}; their web sessions ended")


@user_app.command("sessions")
def user_sessions(
    name: str = typer.Argument(..., help="Whose web sessions to list or end."),
    revoke: str | None = typer.Option(
        None, "--revoke", help="End sessions: 'all', or one session id from the listing."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List a user's web sessions, or end them with --revoke.

    Shows when each was created and last seen, its latest end and address; never the secret.
    """
    from casework.access.sessions import list_sessions, revoke_sessions

    if revoke is not None:
        ended = revoke_sessions(_engine(), name, revoke.strip().lower())
        if as_json:
            print_json({"user": name, "ended": ended})
            return
        console.print(
            f"[yellow]ended[/] {ended} web session{'s' if ended != 1 else ''} of {name}",
            highlight=False,
        )
        return
    sessions = list_sessions(_engine(), name)
    if as_json:
        print_json([s.to_dict() for s in sessions])
        return
    if not sessions:
        console.print(f"{name} has no web sessions", highlight=False)
        return
    table = Table("id", "created", "last seen", "ends by", "address")
    for s in sessions:
        table.add_row(
            str(s.id),
            f"{s.created_at:%Y-%m-%d %H:%M}",
            f"{s.last_seen_at:%Y-%m-%d %H:%M:%S}",
            f"{s.expires_at:%Y-%m-%d %H:%M}",
            s.address or "unknown",
        )
    console.print(table)


@token_app.command("create")
def token_create(
    user: str = typer.Argument(..., help="Whose token it is."),
    expires_days: int | None = typer.Option(
        None, "--expires-days", help="Days until it expires (default: never)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (includes the token)."),
) -> None:
    """Create a token and print it once: it is stored hashed and cannot be shown again."""
    from casework.access.service import create_token

    info, secret = create_token(_engine(), user, expires_days=expires_days)
    if as_json:
        print_json(info.to_dict() | {"token": secret})
        return
    expiry = f"expires {info.expires_at:%Y-%m-%d}" if info.expires_at else "no expiry"
    err_console.print(
        f"token {info.id} for {info.user} ({expiry}); copy it now, it is not shown again:",
        highlight=False,
    )
    # The secret alone on stdout, so `TOKEN=$(casework token create ana)` works.
    sys.stdout.write(secret + "\n")


@token_app.command("list")
def token_list(
    user: str = typer.Argument(..., help="Whose tokens to list."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List a user's tokens by id and prefix (the secrets themselves are never stored)."""
    from casework.access.service import list_tokens

    tokens = list_tokens(_engine(), user)
    if as_json:
        print_json([t.to_dict() for t in tokens])
        return
    table = Table("id", "prefix", "status", "created", "last used", "expires")
    for t in tokens:
        table.add_row(
            str(t.id),
            t.prefix,
            t.status(),
            f"{t.created_at:%Y-%m-%d %H:%M}",
            f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "never",
            f"{t.expires_at:%Y-%m-%d}" if t.expires_at else "never",
        )
    console.print(table)


@token_app.command("revoke")
def token_revoke(
    token: str = typer.Argument(..., help="Token id or prefix, as `casework token list` shows."),
) -> None:
    """Revoke a token: it answers 401 from now on."""
    from casework.access.service import revoke_token

    info = revoke_token(_engine(), token)
    console.print(f"[yellow]revoked[/] token {info.id} ({info.prefix}…) of {info.user}")
