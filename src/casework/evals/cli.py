"""``casework eval``: run an app's evaluation, list, show and compare stored runs.

Quick start::

    casework eval receipts                         # the app's dataset, default strategy
    casework eval receipts --model openai:gpt-4o-mini --judge-model anthropic:claude-3-5-haiku
    casework eval receipts --dataset my_cases.jsonl --limit 20 --concurrency 8 --record
    casework eval receipts --replay latest         # the recorded run again, offline
    casework eval list
    casework eval show latest
    casework eval compare RUN_A RUN_B              # A/B with McNemar's test

One command per registered app with an evaluation suite is generated at start-up, with the
run options of ``RUN_OPTIONS`` and the app's own (``EvalSuite.options``, e.g. ``casework eval
receipts --receipts all``); ``casework eval calibrate RUN`` fits a confidence calibration.
The commands on stored runs live in ``casework.evals.runs_cli``.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from casework.clikit import LazyCommand, lazy_group
from casework.errors import InputError
from casework.evals.runs_cli import (
    calibrate_cmd,
    compare_cmd,
    delete_cmd,
    errored_cases,
    list_cmd,
    print_json,
    print_run,
    run_summary,
    show_cmd,
    validate_cmd,
)

__all__ = ["app", "build_app"]

RESERVED = {"calibrate", "list", "show", "compare", "validate", "delete"}


def _option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


# Every option of `casework eval APP`, declared once (the command's signature is built from it).
RUN_OPTIONS: list[inspect.Parameter] = [
    _option("strategy", str | None, typer.Option(None, "--strategy", "-s", help="Strategy to evaluate (the app's default when omitted).")),
    _option("model", str | None, typer.Option(None, "--model", "-m", help="provider:name for every role, e.g. openai:gpt-4o-mini; replay:DIR replays.")),
    _option("judge_model", str | None, typer.Option(None, "--judge-model", "-j", help="Turns the LLM judge on, with this model.")),
    _option("dataset", str | None, typer.Option(None, "--dataset", "-d", help="A JSONL file, or one of the app's named datasets.")),
    _option("limit", int | None, typer.Option(None, "--limit", "-n", help="Only the first N cases.")),
    _option("sample", int | None, typer.Option(None, "--sample", help="A random sample of N cases (seeded by --seed), in dataset order.")),
    _option("seed", int, typer.Option(0, "--seed", help="The seed of --sample.")),
    _option("concurrency", int, typer.Option(4, "--concurrency", "-c", help="Cases in flight at once.")),
    _option("executor", str, typer.Option("local", "--executor", help="Where cases run: local (worker threads) or ray (a Ray cluster).")),
    _option("address", str | None, typer.Option(None, "--address", help="The Ray cluster (HOST:PORT) for --executor ray; a local Ray when omitted.")),
    _option("record", bool, typer.Option(False, "--record", help="Write each case's model calls to cassettes for offline replay.")),
    _option("replay", str | None, typer.Option(None, "--replay", help="Replay a recorded run (id, 'latest' or run directory) offline.")),
    _option("all_layers", bool, typer.Option(False, "--all-layers", help="A cascade runs every layer on every case, to fit its thresholds and draw its accuracy-cost curve.")),
    _option("calibrate", bool, typer.Option(False, "--calibrate", help="Also report ECE after a calibration cross-fitted on this run.")),
    _option("as_json", bool, typer.Option(False, "--json", help="Print the run summary as one JSON document on stdout.")),
    _option("out", Path | None, typer.Option(None, "--out", "-o", help="Run directory (default <home>/evals/<run id>).")),
    _option("rate", float | None, typer.Option(None, "--rate", help="Model requests per second for the model's provider.")),
    _option("retries", int, typer.Option(3, "--retries", help="Retries of a case after a transient model error.")),
    _option("judge_max_calls", int, typer.Option(200, "--judge-max-calls", help="Judge at most the first N cases.")),
    _option("check", bool, typer.Option(False, "--check", help="Exit 1 when a target is missed or a case errored (for CI).")),
    _option("learn", bool, typer.Option(False, "--learn", help="Feed the cases in order, each reviewed one (and spot checks) becoming an example for the next; beside the same cases without memory.")),
    _option("spot_check", float, typer.Option(0.2, "--spot-check", help="With --learn: the share of decided cases a reviewer checks anyway (seeded by --seed).")),
    _option("progress", bool, typer.Option(True, "--progress/--no-progress", help="Show a progress bar on stderr.")),
]  # fmt: skip


def _suite_options(suite: Any) -> list[inspect.Parameter]:
    """The app's own options (``EvalSuite.options``) as repeatable ``--name VALUE``."""
    params = []
    for opt in suite.options:
        flag = "--" + opt.name.replace("_", "-")
        kind: Any = list[str] | None if opt.multiple else str | None
        params.append(
            _option(
                f"app_{opt.name}",
                kind,
                typer.Option(None, flag, help=opt.help, metavar=opt.metavar),
            )
        )
    return params


def run_config(values: dict[str, Any], settings: Any, cases: Any = None) -> Any:
    """The ``EvalConfig`` of the command line's values."""
    from casework.evals.evalconfig import EvalConfig
    from casework.evals.ratelimit import DEFAULT_RATE_LIMITS, provider_of

    rate_limits = None
    if values["rate"] is not None:
        spec = values["model"] or settings.models.default
        rate_limits = {**DEFAULT_RATE_LIMITS, provider_of(spec): values["rate"]}
    return EvalConfig(
        strategy=values["strategy"],
        model=values["model"],
        judge_model=values["judge_model"],
        dataset=values["dataset"],
        cases=cases,
        limit=values["limit"],
        sample=values["sample"],
        seed=values["seed"],
        concurrency=values["concurrency"],
        executor=values["executor"],
        address=values["address"],
        record=values["record"],
        replay=values["replay"],
        out_dir=values["out"],
        settings=settings,
        rate_limits=rate_limits,
        retries=values["retries"],
        judge_max_calls=values["judge_max_calls"],
        progress=Console(stderr=True) if values["progress"] else False,
        calibrate=values["calibrate"],
        all_layers=values["all_layers"],
    )


def _execute(app_name: str, values: dict[str, Any]) -> None:
    from casework.config import get_settings
    from casework.evals.runner import run_suite

    suite = _suite(app_name)
    settings = get_settings()
    app_values = {opt.name: values.get(f"app_{opt.name}") for opt in suite.options}
    chosen = {k: v for k, v in app_values.items() if v}
    cases = None
    if chosen:
        if suite.cases is None:
            raise InputError(f"The app {app_name!r} cannot build cases from options.")
        options = {k: list(v) if isinstance(v, list) else [v] for k, v in chosen.items()}
        if values["dataset"] is not None:
            refining = {opt.name for opt in suite.options if opt.with_dataset}
            alone = [k for k in chosen if k not in refining]
            if alone:
                raise InputError(f"Use --dataset or --{alone[0].replace('_', '-')}, not both.")
            options["dataset"] = [values["dataset"]]
        cases = suite.cases(settings, options)
        if not cases:
            raise InputError("The options selected no cases; check the names you gave.")
    config = run_config(values, settings, cases)
    if chosen:
        config.extra["app_options"] = chosen
    if values["learn"]:
        _learn(app_name, suite, config, values)
        return
    if values["as_json"]:
        # Stdout carries exactly one JSON document: anything a library prints goes to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            run = run_suite(suite, config)
        print_json(run_summary(run))
    else:
        run = run_suite(suite, config)
        print_run(run)
    errored = errored_cases(run)
    if errored and (values["check"] or values["as_json"]):  # the table lists them otherwise
        Console(stderr=True).print(
            f"{len(errored)} of {len(run.cases)} cases errored"
            + (": --check fails the run." if values["check"] else " (errored_cases)."),
            highlight=False,
        )
    if values["check"] and (run.targets_met is False or errored):
        raise typer.Exit(1)


def _learn(app_name: str, suite: Any, config: Any, values: dict[str, Any]) -> None:
    """``--learn``: the run without memory, then the run learning from review; the curve."""
    from casework.evals.learning import run_learning
    from casework.evals.learning_curve import print_learning
    from casework.examples import hook_of
    from casework.registry import get_app

    spec = get_app(app_name)
    if spec.examples is None:
        raise InputError(
            f"The {app_name} app keeps no examples, so --learn has nothing to learn from; "
            "run it without --learn."
        )
    hook = hook_of(spec)
    if values["as_json"]:
        with contextlib.redirect_stdout(sys.stderr):
            learned = run_learning(suite, config, hook, spot_check=values["spot_check"])
        print_json(
            {
                "learning": {k: v for k, v in learned.learning.items() if k != "cases"},
                "learning_curve_svg": str(learned.svg) if learned.svg else None,
                "memory_run": run_summary(learned.memory),
                "baseline_run": run_summary(learned.baseline),
            }
        )
    else:
        learned = run_learning(suite, config, hook, spot_check=values["spot_check"])
        print_learning(learned, Console())
    errored = errored_cases(learned.memory) + errored_cases(learned.baseline)
    if values["check"] and errored:
        Console(stderr=True).print(
            f"{len(errored)} cases errored: --check fails the run.", highlight=False
        )
        raise typer.Exit(1)


def _suite(app_name: str) -> Any:
    from casework.registry import get_app

    spec = get_app(app_name)
    if spec.eval_suite is None:
        raise InputError(f"The app {app_name!r} has no evaluation suite.")
    return spec.eval_suite()


def _run_help(app_name: str) -> str:
    return f"Evaluate {app_name} on its dataset (or --dataset FILE): metrics, targets, HTML report, stored run."


def _run_command(app_name: str, suite_options: list[inspect.Parameter]) -> Any:
    """``casework eval APP``: every option of ``RUN_OPTIONS`` plus the app's own."""

    def command(**values: Any) -> None:
        _execute(app_name, values)

    params = RUN_OPTIONS + suite_options
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = _run_help(app_name)
    return command


def _eval_commands() -> dict[str, LazyCommand]:
    """``casework eval APP`` for each registered app with a suite: listed by name, its suite
    (and so its options) loaded only when that evaluation runs."""
    from casework.registry import all_apps

    return {
        name: LazyCommand(_run_help(name), partial(_app_command, name))
        for name, spec in sorted(all_apps().items())
        if spec.eval_suite is not None and name not in RESERVED
    }


def _app_command(app_name: str) -> Any:
    return _run_command(app_name, _suite_options(_suite(app_name)))


def build_app() -> typer.Typer:
    """The ``casework eval`` group: one command per registered app with a suite, plus the
    calibrate / list / show / compare / validate / delete commands."""
    eval_app = typer.Typer(
        help="Evaluate an app: `casework eval APP`; then `list`, `show RUN`, `compare RUN_A RUN_B`.",
        no_args_is_help=True,
        cls=lazy_group(_eval_commands, first=True),
    )
    eval_app.command("calibrate")(calibrate_cmd)
    eval_app.command("list")(list_cmd)
    eval_app.command("show")(show_cmd)
    eval_app.command("compare")(compare_cmd)
    eval_app.command("validate")(validate_cmd)
    eval_app.command("delete")(delete_cmd)
    return eval_app


app = build_app()
