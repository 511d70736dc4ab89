"""``casework eval``: run an app's evaluation, list, show and compare stored runs.

Quick start::

    casework eval receipts                         # the app's dataset, default strategy
    casework eval receipts --model openai:gpt-4o-mini --judge-model anthropic:claude-3-5-haiku
    casework eval receipts --dataset my_cases.jsonl --limit 20 --concurrency 8 --record
    casework eval receipts --replay latest         # the recorded run again, offline
    casework eval list
    casework eval show latest
    casework eval compare RUN_A RUN_B              # A/B with McNemar's test

One command per registered app with an evaluation suite is generated at start-up; ``casework
eval run APP`` does the same for any app name.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from casework.errors import InputError

__all__ = ["app", "build_app"]

RESERVED = {"run", "list", "show", "compare", "validate", "delete"}


def _console() -> Console:
    """A console per command, so the terminal width (or ``COLUMNS``) is read when printing."""
    return Console()


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _summary(run: Any) -> dict[str, Any]:
    run_dir = Path(run.run_dir) if run.run_dir else None
    return {
        "run_id": run.run_id,
        "app": run.app,
        "strategy": run.strategy,
        "model": run.model,
        "judge_model": run.judge_model,
        "dataset": run.dataset,
        "status": run.status,
        "cases": len(run.cases),
        "wall_seconds": run.wall_seconds,
        "metrics": run.metrics,
        "targets": [t.to_dict() for t in run.target_results],
        "targets_met": run.targets_met,
        "failed_cases": [c.case_id for c in run.failed_cases],
        "run_dir": str(run_dir) if run_dir else None,
        "report_html": str(run_dir / "report.html") if run_dir else None,
        "report_json": str(run_dir / "report.json") if run_dir else None,
    }


def _print_run(run: Any) -> None:
    from casework.evals.report import HEADLINE, format_metric, metric_label

    _console().print(
        f"[bold]{run.app}[/] / {run.strategy} · run [cyan]{run.run_id}[/] · {len(run.cases)} cases in "
        f"{run.wall_seconds:.1f} s · model {run.model or 'settings default'}"
    )
    if run.target_results:
        table = Table("target", "value", "goal", "")
        for t in run.target_results:
            mark = (
                "[green]met[/]"
                if t.met
                else "[red]missed[/]"
                if t.met is False
                else "[dim]no data[/]"
            )
            table.add_row(
                metric_label(t.metric),
                format_metric(t.metric, t.value),
                f"{t.op} {format_metric(t.metric, t.target)}",
                mark,
            )
        _console().print(table)
    table = Table("metric", "value")
    targeted = {t.metric for t in run.target_results}
    for key in HEADLINE:
        if run.metrics.get(key) is not None and key not in targeted:
            table.add_row(metric_label(key), format_metric(key, run.metrics[key]))
    _console().print(table)
    failed = run.failed_cases
    if failed:
        shown = ", ".join(c.case_id for c in failed[:10]) + (" …" if len(failed) > 10 else "")
        _console().print(f"[yellow]{len(failed)} failed case(s):[/] {shown}")
    if run.run_dir:
        _console().print(f"report: {Path(run.run_dir) / 'report.html'}")


def _execute(
    app_name: str,
    *,
    strategy: str | None,
    model: str | None,
    judge_model: str | None,
    dataset: str | None,
    limit: int | None,
    concurrency: int,
    record: bool,
    replay: str | None,
    as_json: bool,
    out: Path | None,
    rate: float | None,
    retries: int,
    judge_max_calls: int,
    check: bool,
    progress: bool,
    workers: str = "threads",
) -> None:
    from casework.config import get_settings
    from casework.evals.runner import DEFAULT_RATE_LIMITS, provider_of, run_suite
    from casework.registry import get_app

    spec = get_app(app_name)
    if spec.eval_suite is None:
        raise InputError(f"The app {app_name!r} has no evaluation suite.")
    suite = spec.eval_suite()
    settings = get_settings()
    rate_limits = None
    if rate is not None:
        rate_limits = {**DEFAULT_RATE_LIMITS, provider_of(model or settings.models.default): rate}
    run = run_suite(
        suite,
        strategy=strategy,
        model=model,
        judge_model=judge_model,
        dataset=dataset,
        limit=limit,
        concurrency=concurrency,
        record=record,
        replay=replay,
        out_dir=out,
        settings=settings,
        rate_limits=rate_limits,
        retries=retries,
        judge_max_calls=judge_max_calls,
        progress=Console(stderr=True) if progress else False,
        workers=workers,  # type: ignore[arg-type]
    )
    if as_json:
        _print_json(_summary(run))
    else:
        _print_run(run)
    if check and run.targets_met is False:
        raise typer.Exit(1)


def _run_options(app_name: str | None) -> Any:
    """A command with every run option; ``app_name`` None adds an APP argument."""

    def command(
        strategy: str | None = typer.Option(
            None, "--strategy", "-s", help="Strategy to evaluate (the app's default when omitted)."
        ),
        model: str | None = typer.Option(
            None,
            "--model",
            "-m",
            help="provider:name for every role, e.g. openai:gpt-4o-mini; replay:DIR replays.",
        ),
        judge_model: str | None = typer.Option(
            None, "--judge-model", "-j", help="Turns the LLM judge on, with this model."
        ),
        dataset: str | None = typer.Option(
            None, "--dataset", "-d", help="A JSONL file, or one of the app's named datasets."
        ),
        limit: int | None = typer.Option(None, "--limit", "-n", help="Only the first N cases."),
        concurrency: int = typer.Option(4, "--concurrency", "-c", help="Cases in flight at once."),
        record: bool = typer.Option(
            False, "--record", help="Write each case's model calls to cassettes for offline replay."
        ),
        replay: str | None = typer.Option(
            None, "--replay", help="Replay a recorded run (id, 'latest' or run directory) offline."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
        out: Path | None = typer.Option(
            None, "--out", "-o", help="Run directory (default <home>/evals/<run id>)."
        ),
        rate: float | None = typer.Option(
            None, "--rate", help="Model requests per second for the model's provider."
        ),
        retries: int = typer.Option(
            3, "--retries", help="Retries of a case after a transient model error."
        ),
        judge_max_calls: int = typer.Option(
            200, "--judge-max-calls", help="Judge at most the first N cases."
        ),
        check: bool = typer.Option(
            False, "--check", help="Exit 1 when a target is missed (for CI)."
        ),
        progress: bool = typer.Option(
            True, "--progress/--no-progress", help="Show a progress bar on stderr."
        ),
        workers: str = typer.Option(
            "threads",
            "--workers",
            help="threads (default) or loop: run async strategies on one event loop.",
        ),
    ) -> None:
        _execute(
            app_name or "",
            strategy=strategy,
            model=model,
            judge_model=judge_model,
            dataset=dataset,
            limit=limit,
            concurrency=concurrency,
            record=record,
            replay=replay,
            as_json=as_json,
            out=out,
            rate=rate,
            retries=retries,
            judge_max_calls=judge_max_calls,
            check=check,
            progress=progress,
            workers=workers,
        )

    if app_name is not None:
        command.__doc__ = f"Evaluate {app_name} on its dataset (or --dataset FILE): metrics, targets, HTML report, stored run."
        return command

    def run_command(
        app_name_arg: str = typer.Argument(..., metavar="APP", help="A registered app."),
        strategy: str | None = typer.Option(None, "--strategy", "-s", help="Strategy to evaluate."),
        model: str | None = typer.Option(
            None, "--model", "-m", help="provider:name for every role."
        ),
        judge_model: str | None = typer.Option(
            None, "--judge-model", "-j", help="Turns the LLM judge on, with this model."
        ),
        dataset: str | None = typer.Option(
            None, "--dataset", "-d", help="A JSONL file, or a named dataset."
        ),
        limit: int | None = typer.Option(None, "--limit", "-n", help="Only the first N cases."),
        concurrency: int = typer.Option(4, "--concurrency", "-c", help="Cases in flight at once."),
        record: bool = typer.Option(False, "--record", help="Write cassettes for offline replay."),
        replay: str | None = typer.Option(None, "--replay", help="Replay a recorded run offline."),
        as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
        out: Path | None = typer.Option(None, "--out", "-o", help="Run directory."),
        rate: float | None = typer.Option(
            None, "--rate", help="Model requests per second for the model's provider."
        ),
        retries: int = typer.Option(3, "--retries", help="Retries after a transient model error."),
        judge_max_calls: int = typer.Option(
            200, "--judge-max-calls", help="Judge at most the first N cases."
        ),
        check: bool = typer.Option(False, "--check", help="Exit 1 when a target is missed."),
        progress: bool = typer.Option(
            True, "--progress/--no-progress", help="Show a progress bar on stderr."
        ),
        workers: str = typer.Option(
            "threads",
            "--workers",
            help="threads (default) or loop: run async strategies on one event loop.",
        ),
    ) -> None:
        """Evaluate any registered app: `casework eval run APP` is `casework eval APP`."""
        _execute(
            app_name_arg,
            strategy=strategy,
            model=model,
            judge_model=judge_model,
            dataset=dataset,
            limit=limit,
            concurrency=concurrency,
            record=record,
            replay=replay,
            as_json=as_json,
            out=out,
            rate=rate,
            retries=retries,
            judge_max_calls=judge_max_calls,
            check=check,
            progress=progress,
            workers=workers,
        )

    return run_command


def list_cmd(
    app_name: str | None = typer.Option(None, "--app", "-a", help="Only this app's runs."),
    limit: int = typer.Option(20, "--limit", "-n", help="How many (newest first)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List stored evaluation runs, newest first."""
    from casework.evals.report import format_metric
    from casework.evals.store import list_runs

    runs = list_runs(app=app_name, limit=limit)
    if as_json:
        _print_json([r.to_dict() for r in runs])
        return
    if not runs:
        _console().print("No evaluation runs yet: run `casework eval APP`.")
        return
    table = Table(
        "run (app-date-time-tag)",
        "strategy",
        "model",
        "cases",
        "accuracy",
        box=box.SIMPLE_HEAD,
        caption="accuracy in green: every target met; red: a target missed",
    )
    table.columns[0].no_wrap = True
    for r in runs:
        style = "green" if r.targets_met else "red" if r.targets_met is False else "default"
        cases = f"{r.cases}" + (f" ({r.errors} err)" if r.errors else "")
        table.add_row(
            r.run_id,
            r.strategy,
            r.model or "–",
            cases,
            f"[{style}]{format_metric('accuracy', r.accuracy)}[/]",
        )
    _console().print(table)


def show_cmd(
    run_ref: str = typer.Argument(
        ..., metavar="RUN", help="Run id, unique prefix, 'latest' or 'latest:APP'."
    ),
    case_id: str | None = typer.Option(
        None, "--case", help="Show one case: outcome, path, scores, trace."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    html: bool = typer.Option(
        False, "--html", help="Write the HTML report again (from the database) and print its path."
    ),
) -> None:
    """Show a stored run (or one of its cases)."""
    from casework.errors import NotFoundError
    from casework.evals.store import load_run

    run = load_run(run_ref)
    if html:
        from casework.evals.report import write_report

        if not run.run_dir:
            raise InputError(f"Run {run.run_id} has no run directory to write into.")
        path = write_report(run)
        _console().print(f"report: {path}")
        return
    if case_id is None:
        if as_json:
            _print_json(_summary(run))
        else:
            _print_run(run)
        return
    case = run.case(case_id)
    if case is None:
        raise NotFoundError(f"Run {run.run_id} has no case {case_id!r}.")
    if as_json:
        _print_json(case.to_dict())
        return
    from casework.evals.report import _case_href

    traj = case.trajectory or {}
    outcome = (
        f"error: {case.error}"
        if case.error
        else {True: "correct", False: "wrong", None: "not scored"}[case.correct]
    )
    _console().print(
        f"[bold]{case.case_id}[/] · expected {case.expected_verdict} · got {case.verdict} · {outcome}"
    )
    _console().print(
        f"path: {' -> '.join(c['name'] + ('' if c['ok'] else ' (failed)') for c in case.tool_calls) or '(no tool calls)'}"
    )
    if traj:
        _console().print(
            f"trajectory: {traj.get('type')} · length {traj.get('path_length')} / optimal {traj.get('optimal_length')} "
            f"· redundant {len(traj.get('redundant') or [])} · circular {bool(traj.get('circular'))} "
            f"· errors {traj.get('errors')} corrected {traj.get('corrected')}"
        )
    if case.tool_choice:
        tc = case.tool_choice
        _console().print(
            f"tool choice: {'right' if tc['correct'] else 'wrong'} · missing {tc['missing']} · unnecessary {tc['unnecessary']} "
            f"· hallucinated {len(tc['hallucinated'])}"
        )
    if case.judge:
        _console().print(f"judge: {case.judge}")
    if run.run_dir:
        _console().print(f"page: {Path(run.run_dir) / _case_href(case)}")
        if case.trace:
            _console().print(f"trace: {Path(run.run_dir) / case.trace}")


def compare_cmd(
    run_a: str = typer.Argument(
        ..., metavar="RUN_A", help="Baseline run (id, prefix or 'latest')."
    ),
    run_b: str = typer.Argument(..., metavar="RUN_B", help="Candidate run."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    html: Path | None = typer.Option(
        None, "--html", help="Also write the comparison as an HTML page here."
    ),
    all_cases: bool = typer.Option(
        False, "--all", help="List every paired case, not only those that differ."
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level."),
) -> None:
    """Two runs of the same dataset side by side, with McNemar's test on accuracy."""
    from casework.evals.compare import compare_runs, render_compare_html
    from casework.evals.report import format_metric, metric_label
    from casework.evals.store import load_run

    cmp = compare_runs(load_run(run_a), load_run(run_b), alpha=alpha)
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(render_compare_html(cmp), encoding="utf-8")
    if as_json:
        _print_json(cmp.to_dict())
        return
    for w in cmp.warnings:
        _console().print(f"[yellow]warning:[/] {w}")
    _console().print(
        f"A [cyan]{cmp.a['run_id']}[/] ({cmp.a['strategy']}, {cmp.a['model'] or 'default'})  vs  "
        f"B [cyan]{cmp.b['run_id']}[/] ({cmp.b['strategy']}, {cmp.b['model'] or 'default'})"
    )
    t = cmp.mcnemar
    if t is not None:
        verdict = "[green]significant[/]" if t.significant else "not significant"
        _console().print(
            f"accuracy {format_metric('accuracy', cmp.accuracy_a)} → {format_metric('accuracy', cmp.accuracy_b)} on "
            f"{cmp.paired_cases} paired cases; A-only right {t.a_only}, B-only right {t.b_only}; "
            f"McNemar exact p = {t.p_value:.4g} ({verdict} at {t.alpha})"
        )
    table = Table("metric", "A", "B", "B − A")
    for m in cmp.metrics:
        if m["a"] is None and m["b"] is None:
            continue
        d = m["delta"]
        table.add_row(
            metric_label(m["metric"]),
            format_metric(m["metric"], m["a"]),
            format_metric(m["metric"], m["b"]),
            "–" if d is None else ("+" if d > 0 else "") + format_metric(m["metric"], d),
        )
    _console().print(table)
    rows = cmp.cases if all_cases else cmp.differing
    if rows:
        table = Table("case", "expected", "A", "B", "change")
        for c in rows:
            table.add_row(
                c.case_id,
                str(c.expected),
                str(c.a_verdict or c.a_error),
                str(c.b_verdict or c.b_error),
                c.change,
            )
        _console().print(table)
    else:
        _console().print("Every paired case has the same outcome.")
    if html is not None:
        _console().print(f"comparison page: {html}")


def validate_cmd(
    source: str = typer.Argument(
        ..., metavar="FILE_OR_APP", help="A JSONL dataset, or an app (its default dataset)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check a dataset file and count its cases by scenario, complexity, tag and verdict."""
    from casework.evals.datasets import dataset_summary, load_dataset

    path = Path(source)
    if not path.exists():
        from casework.registry import all_apps

        spec = all_apps().get(source)
        if spec is None or spec.eval_suite is None:
            raise InputError(
                f"{source!r} is neither a dataset file nor an app with an evaluation suite."
            )
        path = Path(spec.eval_suite().dataset)
    summary = {"dataset": str(path), **dataset_summary(load_dataset(path))}
    if as_json:
        _print_json(summary)
        return
    _console().print(
        f"[green]ok[/] {path}: {summary['cases']} cases, {summary['with_reference_tools']} with a reference tool path"
    )
    for key in ("verdict", "scenario_type", "complexity", "tags"):
        if summary[key]:
            _console().print(f"  {key}: " + ", ".join(f"{k} {v}" for k, v in summary[key].items()))


def delete_cmd(
    run_ref: str = typer.Argument(..., metavar="RUN", help="Run id or unique prefix."),
) -> None:
    """Delete a stored run from the database (its files stay on disk)."""
    from casework.evals.store import delete_run

    _console().print(f"deleted {delete_run(run_ref)}")


def build_app() -> typer.Typer:
    """The ``casework eval`` group: one command per registered app with a suite, plus the
    run / list / show / compare / validate / delete commands."""
    eval_app = typer.Typer(
        help="Evaluate an app: `casework eval APP`; then `list`, `show RUN`, `compare RUN_A RUN_B`.",
        no_args_is_help=True,
    )
    from casework.registry import all_apps

    for name, spec in sorted(all_apps().items()):
        if spec.eval_suite is not None and name not in RESERVED:
            eval_app.command(name)(_run_options(name))
    eval_app.command("run")(_run_options(None))
    eval_app.command("list")(list_cmd)
    eval_app.command("show")(show_cmd)
    eval_app.command("compare")(compare_cmd)
    eval_app.command("validate")(validate_cmd)
    eval_app.command("delete")(delete_cmd)
    return eval_app


app = build_app()
