"""``casework bench``: the benchmarks of the model layer, the runtime, the API, the web
inbox and start-up. Each command calls its module's ``run_*`` and prints or checks."""

from __future__ import annotations

from pathlib import Path

import typer

from casework.clikit import (
    JsonOption,
    LimitOption,
    NoProgressOption,
    console,
    err_console,
    print_json,
)

__all__ = ["bench_app"]

bench_app = typer.Typer(help="Benchmarks of the model layer and the runtime.", no_args_is_help=True)


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
    memory: bool = typer.Option(
        False,
        "--memory",
        help="Also, for apps with a memory: the sample's second half with no examples and "
        "with its first half imported as examples.",
    ),
    as_json: JsonOption = False,
) -> None:
    """Seconds per decided case of each app's default strategy (the wait for an answer)."""
    from casework.bench.decided import check_decided, print_decided_report, run_decided_bench

    result = run_decided_bench(app_names or None, sample=sample, seed=seed, memory=memory)
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
    exclude: list[Path] = typer.Option(
        [],
        "--exclude",
        help="With --write-dataset: leave out the pages of this earlier dataset (repeatable).",
    ),
    no_progress: NoProgressOption = False,
    as_json: JsonOption = False,
) -> None:
    """OCR character and word error rates against the transcripts, and seconds per page."""
    from casework.bench.ocr import print_ocr_report, run_ocr_bench
    from casework.bench.ocr import write_dataset as write

    if write_dataset is not None:
        count = write(folder, write_dataset, split=split, limit=limit, exclude=exclude)
        err_console.print(f"wrote {count} documents to {write_dataset}", highlight=False)
        return
    from casework.registry import app_service

    result = run_ocr_bench(
        folder,
        engine or list(app_service("documents").ENGINE_NAMES),
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
