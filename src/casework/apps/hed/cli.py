"""``casework hed …``: validate, annotate, batch, vocabulary, bench, demo.

Thin: every command calls ``service`` and prints; errors a user can cause raise
``CaseworkError`` subclasses and the root CLI prints them as one sentence.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from casework.clikit import AddressOption, ExecutorOption, print_json

if TYPE_CHECKING:
    from casework.apps.hed.models import ValidatorKind

__all__ = ["app"]

console = Console(width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True)
app = typer.Typer(
    help='Natural language to valid HED annotations. Try `casework hed validate "Sensory-event, '
    'Red"` and `casework hed annotate "A red circle appears on the screen"`.',
    no_args_is_help=True,
)


def _schema_or_default(value: str | None) -> str:
    # the default is read here, not at import: hed.models loads LangGraph (`--help` stays quick)
    from casework.apps.hed.models import DEFAULT_SCHEMA

    return value or DEFAULT_SCHEMA


SCHEMA_OPTION = typer.Option(
    None,
    "--schema",
    help="HED schema version (8.0.0-8.5.0); the app's default version when omitted.",
    callback=_schema_or_default,
)


def _validator_kind(value: str) -> ValidatorKind:
    from casework.errors import InputError

    if value not in ("auto", "js", "python"):
        raise InputError(f"Unknown validator {value!r}; use js, python or auto.")
    return value  # type: ignore[return-value]


def _show_issue(issue: Any) -> None:
    where = f" at {issue.where}" if issue.where else ""
    console.print(f"  {issue.severity} {issue.code}{where}: {issue.message}", highlight=False)


@app.command("validate")
def validate_cmd(
    hed: list[str] | None = typer.Argument(None, help="One or more HED strings."),
    schema: str = SCHEMA_OPTION,
    definitions: Path | None = typer.Option(
        None,
        "--definitions",
        help="Definitions in context: a JSON sidecar (its Definition entries) or a text/TSV "
        "file of (Definition/Name, (...)) strings.",
    ),
    sidecar: Path | None = typer.Option(
        None, "--sidecar", help="Validate this BIDS sidecar (events.json)."
    ),
    events: Path | None = typer.Option(
        None, "--events", help="Validate this events.tsv (with --sidecar: the pair)."
    ),
    validator: str = typer.Option(
        "auto", "--validator", help="js (npm hed-validator), python (hedtools) or auto."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Validate HED strings, or a BIDS sidecar and events file; exit 1 when anything is
    invalid. Errors carry the HED spec's codes (and, in files, where they are)."""
    from casework.errors import InputError

    if sidecar is not None or events is not None:
        if hed:
            raise InputError(
                "Pass HED strings or --sidecar/--events, not both; to validate strings with a "
                "sidecar's definitions, pass it as --definitions."
            )
        _validate_files(sidecar, events, definitions, schema, as_json)
        return
    if not hed:
        raise InputError(
            'Pass one or more HED strings ("Sensory-event, Red"), or --sidecar events.json '
            "[--events events.tsv]."
        )
    _validate_strings(hed, definitions, schema, _validator_kind(validator), as_json)


def _validate_files(
    sidecar: Path | None, events: Path | None, definitions: Path | None, schema: str, as_json: bool
) -> None:
    from casework.apps.hed.service import validate_dataset

    with err_console.status("validating with hedtools"):
        report = validate_dataset(
            sidecar=sidecar, events=events, schema=schema, definitions=definitions
        )
    if as_json:
        print_json(report.to_dict())
    else:
        mark = "[green]valid[/]" if report.valid else "[red]invalid[/]"
        console.print(
            f"{mark} (hedtools, HED {report.schema}): {' + '.join(report.files)}; "
            f"{report.definitions} definitions in context, {len(report.errors)} error(s), "
            f"{len(report.warnings)} warning(s)",
            highlight=False,
        )
        for issue in [*report.errors, *report.warnings]:
            _show_issue(issue)
    if not report.valid:
        raise SystemExit(1)  # the root CLI runs click non-standalone, which swallows typer.Exit


def _validate_strings(
    hed: list[str], definitions: Path | None, schema: str, kind: ValidatorKind, as_json: bool
) -> None:
    from casework.apps.hed.service import read_definitions, validate_strings

    defs = read_definitions(definitions, schema) if definitions is not None else None
    results = validate_strings(hed, schema, validator=kind, definitions=defs)
    defs_valid = defs is None or defs.valid
    if as_json:
        data: Any = [r.to_dict() for r in results] if len(results) > 1 else results[0].to_dict()
        if defs is not None:
            data = {
                "definitions": {
                    "file": defs.source,
                    "names": list(defs.names),
                    "valid": defs.valid,
                    "errors": [i.to_dict() for i in defs.issues],
                },
                "results": [r.to_dict() for r in results],
            }
        print_json(data)
    else:
        if defs is not None:
            mark = "" if defs.valid else "[red]invalid[/] "
            console.print(
                f"{mark}definitions ({defs.source}): {', '.join(defs.names) or 'none usable'}",
                highlight=False,
            )
            for located in defs.issues:
                _show_issue(located)
        for r in results:
            mark = "[green]valid[/]" if r.valid else "[red]invalid[/]"
            console.print(f"{mark} ({r.validator}, HED {r.schema}): {r.hed}", highlight=False)
            for issue in r.errors:
                console.print(f"  error {issue.code}: {issue.message}", highlight=False)
            for issue in r.warnings:
                console.print(f"  warning {issue.code}: {issue.message}", highlight=False)
            if r.fallback_reason:
                console.print(f"  note: {r.fallback_reason}", highlight=False)
    if not defs_valid or not all(r.valid for r in results):
        raise SystemExit(1)  # the root CLI runs click non-standalone, which swallows typer.Exit


@app.command("bench-validators")
def bench_validators_cmd(
    schema: str = SCHEMA_OPTION,
    repeat: int = typer.Option(3, "--repeat", min=1, max=20),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Speed (strings per second) and agreement of the JS and the Python validator on the
    project's strings (the validator cases and the gold annotations)."""
    from casework.apps.hed.service import bench_validators

    result = bench_validators(schema, repeat=repeat)
    if as_json:
        print_json(result)
        return
    for kind in ("js", "python"):
        figures = result[kind]
        if figures is None:
            console.print(f"{kind}: not measured ({result['js_unavailable']})", highlight=False)
            continue
        console.print(
            f"{kind}: {figures['strings_per_second']:.0f} strings/s "
            f"(schema load {figures['schema_load_seconds']:.1f} s, {figures['strings']} strings)"
        )
    agreement = result["agreement"]
    if agreement is not None:
        console.print(
            f"agreement on {agreement['strings']} strings: validity {agreement['validity']:.1%}, "
            f"error codes {agreement['codes']:.1%}",
            highlight=False,
        )
        for hed in agreement["validity_differs"]:
            console.print(f"  validity differs: {hed}", highlight=False, markup=False)


def _show_decision(d: Any) -> None:
    colour = {"VALID": "green", "NEEDS_REVIEW": "yellow"}.get(d.verdict, "red")
    console.print(f"[bold {colour}]{d.verdict}[/] ({d.final_status})", highlight=False)
    console.print(f"  HED: {d.annotation or '-'}", highlight=False)
    console.print(
        f"  {d.validation_attempts} validation attempt(s), {d.total_iterations} annotation(s), "
        f"{d.validator or '-'} validator, status {d.validation_status}, "
        f"{getattr(d.run.usage, 'wall_seconds', 0):.1f} s, strategy {d.run.strategy}"
        + (f", model {d.run.model}" if d.run.model else ""),
        highlight=False,
    )
    for line in d.validation_errors:
        console.print(f"  error {line}", highlight=False)
    for line in d.validation_warnings:
        console.print(f"  warning {line}", highlight=False)
    for line in d.portability_warnings:
        console.print(f"  portability: {line}", highlight=False)
    if d.evaluation_feedback:
        console.print(f"  evaluation: {d.evaluation_feedback}", highlight=False)
    if d.assessment_feedback:
        console.print(f"  assessment: {d.assessment_feedback}", highlight=False)
    if d.validator_note:
        console.print(f"  note: {d.validator_note}", highlight=False)
    if d.run.detail:
        console.print(f"  ended by {d.run.ended_by}: {d.run.detail}", highlight=False)


@app.command("annotate")
def annotate_cmd(
    description: str = typer.Argument("", help="The event, in natural language."),
    schema: str = SCHEMA_OPTION,
    assess: bool = typer.Option(False, "--assess", help="Run the completeness assessment too."),
    strategy: str = typer.Option(
        "cascade",
        "--strategy",
        help="cascade (the look-up, then the bundled model, then a remote model when --model "
        "names one), or one strategy: loop, loop-no-eval, one-shot, rules (no model).",
    ),
    model: str | None = typer.Option(None, "--model", help="provider:name for every text role."),
    image: Path | None = typer.Option(
        None, "--image", help="Describe this image with the vision model, then annotate."
    ),
    vision_model: str | None = typer.Option(
        None, "--vision-model", help="provider:name of a vision-capable model."
    ),
    validator: str = typer.Option("auto", "--validator", help="js, python or auto."),
    events: Path | None = typer.Option(
        None,
        "--events",
        help="Annotate this events.tsv's categorical levels into a sidecar (instead of a "
        "description).",
    ),
    sidecar: Path | None = typer.Option(
        None,
        "--sidecar",
        help="With --events: the existing sidecar (its level descriptions, definitions and "
        "HED are used and kept).",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="With --events: the sidecar to write (default: FILE.json)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Annotate an event description (or an image) with valid HED, by the agent loop; or,
    with --events, write the HED of an events file's categorical levels as a sidecar."""
    from casework.errors import InputError

    if events is not None:
        if description or image is not None:
            raise InputError("Pass a description (or --image), or --events events.tsv, not both.")
        _annotate_events(events, sidecar, out, schema, strategy, model, validator, as_json)
        return
    if sidecar is not None or out is not None:
        raise InputError("--sidecar and --out go with --events events.tsv.")
    _annotate_description(
        description, schema, assess, strategy, model, image, vision_model, validator, as_json
    )


def _annotate_description(
    description: str,
    schema: str,
    assess: bool,
    strategy: str,
    model: str | None,
    image: Path | None,
    vision_model: str | None,
    validator: str,
    as_json: bool,
) -> None:
    from casework.apps.hed.deps import build_deps
    from casework.apps.hed.models import decision_json
    from casework.apps.hed.service import (
        annotate,
        annotation_input,
        check_request,
        load_annotation_model,
    )
    from casework.errors import InputError
    from casework.runtime.runconfig import RunConfig

    check_request(schema, strategy, description if image is None else None)
    kind = _validator_kind(validator)
    if image is not None and not image.is_file():
        raise InputError(f"Image {image} does not exist; pass the path of a PNG or JPEG file.")
    deps = build_deps(validator=kind)
    config = RunConfig.of(deps.settings, model, vision=vision_model)
    with err_console.status("loading the annotation model"):
        load_annotation_model(config, strategy)
    describing = err_console.status("vision: describing the image") if image else nullcontext()
    with describing:
        input, image_description = annotation_input(
            config,
            description,
            schema=schema,
            run_assessment=assess,
            image=image.read_bytes() if image is not None else None,
            image_name=str(image),
        )
    with err_console.status("annotate") as status:

        def step_done(event: dict[str, Any]) -> None:
            status.update(f"{event['node']} done (iteration {event['total_iterations']})")

        decision = annotate(input, deps, replace(config, events=step_done), strategy=strategy)
    if as_json:
        data = decision_json(decision)
        if image_description:
            data["image_description"] = image_description
        print_json(data)
    else:
        if image_description:
            console.print(f"image: {image_description}", highlight=False)
        _show_decision(decision)
    if decision.run and decision.run.ended_by == "error:model":
        raise SystemExit(1)


def _annotate_events(
    events: Path,
    sidecar: Path | None,
    out: Path | None,
    schema: str,
    strategy: str,
    model: str | None,
    validator: str,
    as_json: bool,
) -> None:
    from casework.apps.hed.deps import build_deps
    from casework.apps.hed.service import (
        annotate_events,
        check_events_annotation,
        load_annotation_model,
    )
    from casework.runtime.runconfig import RunConfig

    target = check_events_annotation(
        events, out=out, sidecar=sidecar, schema=schema, strategy=strategy
    )
    deps = build_deps(validator=_validator_kind(validator))
    config = RunConfig.of(deps.settings, model)
    with err_console.status("loading the annotation model"):
        load_annotation_model(config, strategy)
    with err_console.status("annotating levels") as status:

        def level_done(item: dict[str, Any]) -> None:
            status.update(f"{item['column']}={item['level']}: {item['hed'] or '-'}")

        result = annotate_events(
            events,
            deps,
            config,
            sidecar=sidecar,
            schema=schema,
            strategy=strategy,
            out=target,
            on_level=level_done,
        )
    if as_json:
        print_json(result.to_dict())
    else:
        for item in result.levels:
            empty = (
                "- (its tags repeat an earlier column's: left unannotated)"
                if item.get("repeats_dropped")
                else "- (no tag found: left unannotated)"
            )
            console.print(
                f"{item['column']}={item['level']} ({item['decided_by']}): {item['hed'] or empty}",
                highlight=False,
                markup=False,
            )
        report = result.report
        if result.out is not None:
            console.print(
                f"[green]valid[/] (hedtools, HED {report.schema}, with {events.name}): "
                f"wrote {result.out}",
                highlight=False,
            )
        else:
            console.print(
                f"[red]invalid[/] (hedtools, HED {report.schema}, with {events.name}): "
                "nothing written",
                highlight=False,
            )
        for issue in [*report.errors, *report.warnings]:
            _show_issue(issue)
    if result.out is None:
        raise SystemExit(1)


@app.command("batch")
def batch_cmd(
    file: Path = typer.Argument(..., help="CSV with a 'description' column (and optionally 'id')."),
    out: Path | None = typer.Option(
        None, "--out", help="JSON lines output. Default FILE.hed.jsonl"
    ),
    schema: str = SCHEMA_OPTION,
    strategy: str = typer.Option(
        "cascade",
        "--strategy",
        help="cascade (the look-up, then the bundled model, then a remote model when --model "
        "names one), or one strategy: loop, loop-no-eval, one-shot, rules (no model).",
    ),
    assess: bool = typer.Option(False, "--assess"),
    concurrency: int = typer.Option(2, "--concurrency", min=1, max=64),
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    model: str | None = typer.Option(None, "--model", help="provider:name for every text role."),
    validator: str = typer.Option("auto", "--validator", help="js, python or auto."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON document."),
    progress_bar: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a progress bar on stderr."
    ),
) -> None:
    """Annotate every row of a CSV through the platform's batch runner; resumable (finished
    rows are stored as they finish and skipped on a re-run)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from casework.apps.hed.deps import build_deps
    from casework.apps.hed.service import check_batch, run_batch
    from casework.runtime.batch import BatchConfig
    from casework.runtime.runconfig import RunConfig

    batch = BatchConfig(executor=executor, address=address, concurrency=concurrency)
    total = check_batch(file, schema=schema, strategy=strategy, config=batch)
    deps = build_deps(validator=_validator_kind(validator))
    with Progress(
        TextColumn("hed batch"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err_console,
        disable=not progress_bar,
    ) as progress:
        task = progress.add_task("", total=total)

        def on_row(rid: str, data: dict[str, Any]) -> None:
            progress.update(task, advance=1, description=f"{rid}: {data.get('verdict', 'error')}")

        report = run_batch(
            file,
            deps,
            RunConfig.of(deps.settings, model),
            strategy=strategy,
            schema=schema,
            assess=assess,
            concurrency=concurrency,
            executor=executor,
            address=address,
            out=out,
            on_row=on_row,
        )
        progress.update(task, completed=total)
    if as_json:
        print_json(report.to_dict())
        return
    verdicts = ", ".join(f"{k} {v}" for k, v in sorted(report.verdicts.items())) or "none"
    console.print(
        f"{report.total} rows: {report.done} annotated, {report.skipped} already done, "
        f"{report.failed} failed; verdicts: {verdicts}; results in {report.out}",
        highlight=False,
    )


@app.command("vocabulary")
def vocabulary_cmd(
    schema: str = SCHEMA_OPTION,
    full: bool = typer.Option(False, "--full", help="Every tag (not the compact prompt form)."),
    as_json: bool = typer.Option(False, "--json", help="Tags with long form, units, rules."),
) -> None:
    """The schema's vocabulary as the annotation prompt carries it (short form only)."""
    from casework.apps.hed.service import vocabulary_listing

    listing = vocabulary_listing(schema, full=full)
    if as_json:
        print_json(listing.tags)
        return
    console.print(listing.text, highlight=False, markup=False)
    err_console.print(f"{len(listing.tags)} tags; this text is about {listing.tokens} tokens")


@app.command("demo")
def demo_cmd(model: str | None = typer.Option(None, "--model")) -> None:
    """Validate two strings with both validators, then annotate one event with the agent loop."""
    from casework.apps.hed.demo import run_demo

    run_demo(console, model=model)


@app.command("history")
def history_cmd(
    limit: int = typer.Option(20, "--limit", min=1, max=1000),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """The most recent stored annotation runs (from `annotate` and `batch`)."""
    from casework.apps.hed.deps import build_deps

    rows = build_deps().repo.recent(limit)
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print('No annotation runs stored yet; try `casework hed annotate "A beep."`.')
    for r in rows:
        console.print(
            f"{r['id']:>5} {r['created_at'][:19]} {r['strategy']:<13} {r['verdict']:<12} "
            f"{r['annotation']}  <- {r['description'][:60]}",
            highlight=False,
            markup=False,
        )
