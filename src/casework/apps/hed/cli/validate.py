"""``validate`` (HED strings, or a BIDS sidecar and events file) and ``bench-validators``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from casework.apps.hed.cli.common import (
    SCHEMA_OPTION,
    console,
    err_console,
    show_issue,
    validator_kind,
)
from casework.clikit import print_json

if TYPE_CHECKING:
    from casework.apps.hed.models import ValidatorKind

__all__ = ["app"]

app = typer.Typer()


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
    _validate_strings(hed, definitions, schema, validator_kind(validator), as_json)


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
            show_issue(issue)
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
                show_issue(located)
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
