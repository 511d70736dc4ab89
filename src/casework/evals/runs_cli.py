"""``casework eval`` on stored runs: calibrate, list, show, compare, validate and delete;
and how a run is printed (a table, or one JSON summary), which ``casework eval APP`` shares."""

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

__all__ = [
    "calibrate_cmd",
    "compare_cmd",
    "delete_cmd",
    "errored_cases",
    "list_cmd",
    "print_json",
    "print_run",
    "run_summary",
    "show_cmd",
    "validate_cmd",
]


def _console() -> Console:
    """A console per command, so the terminal width (or ``COLUMNS``) is read when printing."""
    return Console()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def run_summary(run: Any) -> dict[str, Any]:
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
        "errored_cases": [{"case_id": c.case_id, "error": c.error} for c in errored_cases(run)],
        "run_dir": str(run_dir) if run_dir else None,
        "report_html": str(run_dir / "report.html") if run_dir else None,
        "report_json": str(run_dir / "report.json") if run_dir else None,
    }


def errored_cases(run: Any) -> list[Any]:
    """The cases that ended in an error instead of an answer (their input or strategy raised)."""
    return [c for c in run.cases if c.error is not None]


def _suite_of(app: str) -> Any:
    """The evaluation suite of an installed app by name; None when there is none."""
    from casework.registry import all_apps

    spec = all_apps().get(app)
    return spec.eval_suite() if spec is not None and spec.eval_suite is not None else None


def _app_headline(app: str) -> list[str]:
    """The app's own headline metrics (``EvalSuite.headline``), when the app is still installed."""
    suite = _suite_of(app)
    return list(suite.headline) if suite is not None else []


def print_run(run: Any) -> None:
    from casework.evals.formatting import HEADLINE, format_metric, metric_label

    _console().print(
        f"[bold]{run.app}[/] / {run.strategy} · run [cyan]{run.run_id}[/] · {len(run.cases)} cases in "
        f"{run.wall_seconds:.1f} s · model {run.model or 'settings default'}"
    )
    _console().print(f"dataset {run.dataset}", highlight=False)
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
    for key in dict.fromkeys([*_app_headline(run.app), *HEADLINE]):
        if run.metrics.get(key) is not None and key not in targeted:
            table.add_row(metric_label(key), format_metric(key, run.metrics[key]))
    _console().print(table)
    failed = run.failed_cases
    if failed:
        shown = ", ".join(c.case_id for c in failed[:10]) + (" …" if len(failed) > 10 else "")
        _console().print(f"[yellow]{len(failed)} failed case(s):[/] {shown}")
    errored = errored_cases(run)
    if errored:
        _console().print(f"[red]{len(errored)} of {len(run.cases)} case(s) errored:[/]")
        for c in errored[:10]:
            _console().print(f"  {c.case_id}: {c.error}", highlight=False)
    if run.run_dir:
        _console().print(f"report: {Path(run.run_dir) / 'report.html'}")


def calibrate_cmd(
    run_ref: str = typer.Argument(
        ..., metavar="RUN", help="Run id, unique prefix, 'latest' or 'latest:APP'."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    target: float = typer.Option(
        0.9,
        "--target",
        min=0.0,
        max=1.0,
        help="Cascade runs: the accuracy each layer's kept decisions must reach.",
    ),
    max_model_share: float | None = typer.Option(
        None,
        "--max-model-share",
        min=0.0,
        max=1.0,
        help="Cascade runs: a budget, at most this share of cases sent on to a model; the "
        "layers before it keep decisions at the highest accuracy that stays within it.",
    ),
) -> None:
    """Fit a confidence calibration on a stored run and store it for its app, strategy and model.

    On a cascade run made with ``--all-layers`` it fits the cascade instead: each layer's
    calibration and its threshold for ``--target`` accuracy, stored for the app and model;
    ``--max-model-share`` fits it for a budget of model calls instead."""
    from casework.config import get_settings
    from casework.evals.calibrate import calibrate_cascade, calibrate_run, calibration_pairs
    from casework.evals.evaluators.calibration import expected_calibration_error
    from casework.evals.store import load_run
    from casework.runtime.calibration import cross_fit

    settings = get_settings()
    run = load_run(run_ref)
    if any(c.layers for c in run.cases):
        policy, path = calibrate_cascade(
            run, settings, target=target, max_model_share=max_model_share
        )
        _print_cascade_fit(run, policy, path, as_json, _calibrate_more(run, settings))
        return
    if max_model_share is not None:
        raise InputError(
            f"--max-model-share fits a cascade; run {run.run_id} is not a cascade run made "
            "with --all-layers."
        )
    cal, path = calibrate_run(run, settings)
    pairs = calibration_pairs(run)
    right = [ok for _, ok in pairs]
    before = expected_calibration_error([c / 100 for c, _ in pairs], right)
    after = expected_calibration_error([c / 100 for c in cross_fit(pairs)], right)
    result = {
        "run_id": run.run_id,
        "app": run.app,
        "strategy": run.strategy,
        "model": run.model,
        "pairs": cal.n,
        "ece_before": before,
        "ece_after_cross_fit": after,
        "path": str(path),
        "calibration": cal.to_dict(),
    }
    more = _calibrate_more(run, settings)
    if more:
        result["app_fit"] = more
    if as_json:
        print_json(result)
        return
    _console().print(
        f"calibration of {run.app}/{run.strategy} ({run.model or 'no model'}) fitted on {cal.n} decisions "
        f"of {run.run_id}: ECE {before:.3f} before, {after:.3f} after (5-fold cross-fit)"
    )
    _console().print(f"stored: {path}")
    if more:
        _console().print(f"{run.app}: {more}")


def _calibrate_more(run: Any, settings: Any) -> str | None:
    """The app's own fit on the run (``EvalSuite.calibrate_more``), when it has one."""
    suite = _suite_of(run.app)
    if suite is None or suite.calibrate_more is None:
        return None
    said: str | None = suite.calibrate_more(run.cases, settings, run.run_id)
    return said


def _print_cascade_fit(
    run: Any, policy: Any, path: Path, as_json: bool, more: str | None = None
) -> None:
    result = {
        "run_id": run.run_id,
        "app": run.app,
        "strategy": run.strategy,
        "model": run.model,
        "path": str(path),
        "policy": policy.to_dict(),
    }
    if more:
        result["app_fit"] = more
    if as_json:
        print_json(result)
        return
    fitted = policy.fitted
    table = Table("layer", "threshold (calibrated)", "share decided", box=box.SIMPLE)

    def shown(threshold: float) -> str:
        return "never" if threshold > 100 else f"{threshold:.1f}"

    for name, rule in policy.layers.items():
        if rule.by_verdict:
            text = ", ".join(
                f"{v} {shown(r.threshold)}" for v, r in sorted(rule.by_verdict.items())
            )
        else:
            text = shown(rule.threshold)
        table.add_row(name, text, f"{fitted.get('share', {}).get(name, 0.0):.2f}")
    console = _console()
    aim = f"accuracy {policy.target:.2f} of what each layer keeps"
    if policy.max_model_share is not None:
        aim = (
            f"at most {policy.max_model_share:.2f} of cases to the model, which keeps what it "
            f"decides at accuracy {policy.target:.2f}; the layers before it keep theirs at "
            f"{fitted.get('cheap_target', 0):.3f}"
        )
    console.print(
        f"cascade of {run.app} fitted on {fitted.get('cases', 0)} cases of {run.run_id} for {aim}"
    )
    console.print(table)
    acc = fitted.get("accuracy")
    console.print(
        f"on these cases: accuracy {acc if acc is None else round(acc, 3)}, needs review "
        f"{fitted.get('needs_review_share', 0):.2f}, model on {fitted.get('model_share', 0):.2f} "
        f"of cases, {fitted.get('seconds_per_case', 0):.2f} s per case"
    )
    if more:
        console.print(f"{run.app}: {more}")
    if fitted.get("budget_met") is False:
        console.print(
            f"[red]the budget is out of reach:[/red] even at accuracy "
            f"{fitted.get('cheap_target', 0):.2f} the layers before the model leave "
            f"{fitted.get('model_share', 0):.2f} of these cases to it; this cheapest fit is stored."
        )
    console.print(f"stored: {path}")


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
        print_json([r.to_dict() for r in runs])
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
            print_json(run_summary(run))
        else:
            print_run(run)
        return
    case = run.case(case_id)
    if case is None:
        raise NotFoundError(f"Run {run.run_id} has no case {case_id!r}.")
    if as_json:
        print_json(case.to_dict())
        return
    from casework.evals.casepages import case_href as _case_href

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
        print_json(cmp.to_dict())
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
    app_name: str | None = typer.Option(
        None, "--app", help="Read the file as this app's dataset (its own short form, if any)."
    ),
) -> None:
    """Check a dataset file and count its cases by scenario, complexity, tag and verdict."""
    from casework.evals.datasets import dataset_summary, load_dataset

    path = Path(source)
    suite = _suite_of(app_name) if app_name else None
    if app_name and suite is None:
        raise InputError(f"{app_name!r} is not an app with an evaluation suite.")
    if not path.exists():
        suite = _suite_of(source)
        if suite is None:
            raise InputError(
                f"{source!r} is neither a dataset file nor an app with an evaluation suite."
            )
        path = Path(suite.dataset)
    read_case = suite.read_case if suite is not None else None
    summary = {"dataset": str(path), **dataset_summary(load_dataset(path, read_case=read_case))}
    if as_json:
        print_json(summary)
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
