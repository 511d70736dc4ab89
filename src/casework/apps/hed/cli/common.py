"""What every hed command shares: the consoles, the ``--schema`` option, the validator's
name checked, and one issue printed."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

if TYPE_CHECKING:
    from casework.apps.hed.models import ValidatorKind

__all__ = ["SCHEMA_OPTION", "console", "err_console", "show_issue", "validator_kind"]

console = Console(width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True)


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


def validator_kind(value: str) -> ValidatorKind:
    from casework.errors import InputError

    if value not in ("auto", "js", "python"):
        raise InputError(f"Unknown validator {value!r}; use js, python or auto.")
    return value  # type: ignore[return-value]


def show_issue(issue: Any) -> None:
    where = f" at {issue.where}" if issue.where else ""
    console.print(f"  {issue.severity} {issue.code}{where}: {issue.message}", highlight=False)
