"""The ``casework`` command: one sub-command group per app, plus the platform commands."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from casework.config import config_sources, get_settings
from casework.errors import CaseworkError

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

app = typer.Typer(
    name="casework",
    help="Agents that decide with evidence. Start with `casework doctor`, then `casework demo`.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
model_app = typer.Typer(help="The bundled offline model.", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks of the model layer and the runtime.", no_args_is_help=True)
app.add_typer(model_app, name="model")
app.add_typer(bench_app, name="bench")


def print_json(data: Any) -> None:
    """JSON to stdout, plain (no Rich markup), for --json flags."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


@app.command("config")
def config_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Print the effective settings and where each value came from."""
    rows = config_sources(get_settings())
    if as_json:
        print_json([{"key": k, "value": v, "source": s} for k, v, s in rows])
        return
    table = Table("setting", "value", "source")
    for key, value, source in rows:
        table.add_row(key, str(value), source)
    console.print(table)


@model_app.command("prepare")
def model_prepare() -> None:
    """Join the bundled model's parts and verify its SHA-256 (once; later calls are instant)."""
    from casework.llm.bundled import prepare_model

    path = prepare_model(get_settings().models_dir)
    console.print(f"[green]ok[/] bundled model ready at {path}")


@app.command()
def doctor() -> None:
    """Check every component and print one line each; exit non-zero on the first broken one."""
    from casework.doctor import run_doctor

    run_doctor(console)


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
    """Serve the HTTP API (every app's routes under /<app>, /health, /docs)."""
    import uvicorn

    from casework.server import create_app

    uvicorn.run(create_app(), host=host, port=port)


@bench_app.command("runtime")
def bench_runtime(
    steps: int = typer.Option(200, help="Tool steps per run."),
    repeats: int = typer.Option(5, help="Runs per variant; the median is reported."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Runtime overhead per ReAct step against bare LangGraph, with a zero-latency model."""
    from casework.bench.runtime import print_runtime_report, run_runtime_bench

    result = run_runtime_bench(steps=steps, repeats=repeats)
    print_json(result) if as_json else print_runtime_report(result, console)


@bench_app.command("local-tools")
def bench_local_tools(
    limit: int | None = typer.Option(None, help="Only the first N prompts."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Tool selection of the bundled model on 20 prompts: validity, accuracy, speed, cache."""
    from casework.bench.local_tools import print_local_tools_report, run_local_tools_bench

    result = run_local_tools_bench(limit=limit, progress=not as_json)
    print_json(result) if as_json else print_local_tools_report(result)


@bench_app.command("eval-throughput")
def bench_eval_throughput(
    cases: int = typer.Option(100, help="Cases to run."),
    concurrency: int = typer.Option(10, help="Cases in flight at once."),
    latency: float = typer.Option(0.2, help="Seconds the scripted model sleeps per call."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Evaluation harness throughput: wall time against the ideal for a sleeping model."""
    from casework.bench.eval_throughput import (
        print_eval_throughput_report,
        run_eval_throughput_bench,
    )

    result = run_eval_throughput_bench(cases=cases, concurrency=concurrency, latency=latency)
    print_json(result) if as_json else print_eval_throughput_report(result, console)


def _mount_plugins() -> None:
    """Mount ``casework eval`` and each registered app's sub-commands."""
    try:
        from casework.evals.cli import app as eval_app
    except ModuleNotFoundError as exc:
        if exc.name != "casework.evals.cli":
            raise
    else:
        app.add_typer(eval_app, name="eval")
    from casework.registry import all_apps

    for spec in all_apps().values():
        if spec.cli is None:
            continue
        try:
            sub = spec.cli()
        except Exception as exc:  # one broken app must not take the other commands down
            err_console.print(
                f"[yellow]warning:[/] app {spec.name!r} has no CLI: {type(exc).__name__}: {exc}"
            )
            continue
        app.add_typer(sub, name=spec.name, help=spec.description)


def main() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        _mount_plugins()
        app(standalone_mode=False)
    except CaseworkError as exc:
        err_console.print(f"[red]error:[/] {exc}", highlight=False)
        raise SystemExit(exc.exit_code) from None
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        raise SystemExit(130) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:  # click usage errors come through here in non-standalone mode
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            raise SystemExit(exc.exit_code) from None
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
