"""``annotate``: an event description (or an image) to valid HED, or an events file's
categorical levels to a sidecar."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import typer

from casework.apps.hed.cli.common import (
    SCHEMA_OPTION,
    console,
    err_console,
    show_issue,
    validator_kind,
)
from casework.clikit import print_json

__all__ = ["app"]

app = typer.Typer()


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
    kind = validator_kind(validator)
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
    deps = build_deps(validator=validator_kind(validator))
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
            show_issue(issue)
    if result.out is None:
        raise SystemExit(1)
