"""``casework hed …``: validate, annotate, batch, vocabulary, bench, demo.

Thin: every command calls the app's modules and prints; errors a user can cause raise
``CaseworkError`` subclasses and the root CLI prints them as one sentence.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console

from casework.apps.hed.validation import DEFAULT_SCHEMA, ValidatorKind

__all__ = ["app"]

console = Console(width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True)
app = typer.Typer(
    help='Natural language to valid HED annotations. Try `casework hed validate "Sensory-event, '
    'Red"` and `casework hed annotate "A red circle appears on the screen"`.',
    no_args_is_help=True,
)

SCHEMA_OPTION = typer.Option(DEFAULT_SCHEMA, "--schema", help="HED schema version (8.0.0-8.5.0).")


def _json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _validator_kind(value: str) -> ValidatorKind:
    from casework.errors import InputError

    if value not in ("auto", "js", "python"):
        raise InputError(f"Unknown validator {value!r}; use js, python or auto.")
    return value  # type: ignore[return-value]


@app.command("validate")
def validate_cmd(
    hed: list[str] = typer.Argument(..., help="One or more HED strings."),
    schema: str = SCHEMA_OPTION,
    validator: str = typer.Option(
        "auto", "--validator", help="js (npm hed-validator), python (hedtools) or auto."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Validate HED strings; exit 1 when any is invalid. Errors carry the HED spec's codes."""
    from casework.apps.hed.validation import validate_many

    results = validate_many(hed, schema, validator=_validator_kind(validator))
    if as_json:
        _json([r.to_dict() for r in results] if len(results) > 1 else results[0].to_dict())
    else:
        for r in results:
            mark = "[green]valid[/]" if r.valid else "[red]invalid[/]"
            console.print(f"{mark} ({r.validator}, HED {r.schema}): {r.hed}", highlight=False)
            for issue in r.errors:
                console.print(f"  error {issue.code}: {issue.message}", highlight=False)
            for issue in r.warnings:
                console.print(f"  warning {issue.code}: {issue.message}", highlight=False)
            if r.fallback_reason:
                console.print(f"  note: {r.fallback_reason}", highlight=False)
    if not all(r.valid for r in results):
        raise SystemExit(1)  # the root CLI runs click non-standalone, which swallows typer.Exit


@app.command("bench-validators")
def bench_validators_cmd(
    schema: str = SCHEMA_OPTION,
    repeat: int = typer.Option(3, "--repeat", min=1, max=20),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Strings per second of the JS and the Python validator on the project's validator cases."""
    from casework.apps.hed.dataset import load_validator_cases
    from casework.apps.hed.validation import bench_validators

    strings = [c["hed"] for c in load_validator_cases()]
    result = bench_validators(strings, schema, repeat=repeat)
    if as_json:
        _json(result)
        return
    for kind, figures in result.items():
        console.print(
            f"{kind}: {figures['strings_per_second']:.0f} strings/s "
            f"(schema load {figures['schema_load_seconds']:.1f} s, {figures['strings']:.0f} strings)"
        )
