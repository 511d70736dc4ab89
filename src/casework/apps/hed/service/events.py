"""An events file's categorical levels annotated into a sidecar, written only when valid."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from casework.apps.hed.context import read_events, read_sidecar, sidecar_definitions, validate_files
from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import DEFAULT_SCHEMA, HedInput
from casework.apps.hed.rules import level_description
from casework.apps.hed.service.annotating import annotate
from casework.apps.hed.sidecar import (
    EventsAnnotation,
    default_sidecar_path,
    drop_repeats,
    levels_to_annotate,
    write_if_valid,
)
from casework.apps.hed.strategies import STRATEGIES
from casework.apps.hed.validation import check_schema
from casework.errors import InputError
from casework.registry import strategy_named
from casework.runtime import RunConfig

__all__ = ["annotate_events", "check_events_annotation"]


def check_events_annotation(
    events: Path, *, out: Path | None, sidecar: Path | None, schema: str, strategy: str
) -> Path:
    """Refuse what cannot run before any model loads; the output path."""
    strategy_named(STRATEGIES, strategy)
    check_schema(schema)
    read_events(events)
    if sidecar is not None:
        read_sidecar(sidecar)
    target = out or default_sidecar_path(events)
    if out is None and target.exists():
        raise InputError(
            f"{target} exists; pass --out to name the sidecar to write (it may be that file)."
        )
    return target


def annotate_events(
    events: Path,
    deps: HedDeps,
    config: RunConfig,
    *,
    sidecar: Path | None = None,
    schema: str = DEFAULT_SCHEMA,
    strategy: str = "cascade",
    out: Path | None = None,
    on_level: Callable[[dict[str, Any]], None] | None = None,
) -> EventsAnnotation:
    """Write a sidecar's HED for the categorical levels of ``events``: each level's
    description (the sidecar's, else its name in words) annotated by ``strategy``, with the
    sidecar's definitions in context (the annotation may use their ``Def/`` names and
    ``Onset``/``Offset``); HED the sidecar already has is kept, and an item a row would repeat
    from an earlier column is taken out (``rules.drop_repeats_across_columns``). The whole
    sidecar is validated
    with the events file (hedtools' BIDS validation) and written to ``out`` only when valid,
    whole, then renamed: nothing is written otherwise."""
    check_schema(schema)
    header, rows = read_events(events)
    base = read_sidecar(sidecar) if sidecar is not None else {}
    name = (out or default_sidecar_path(events)).name
    defs = sidecar_definitions(base, name, schema)
    found = levels_to_annotate(events, header, rows, base)
    result = json.loads(json.dumps(base))  # a copy: the user's sidecar is not changed
    hed: dict[str, dict[str, str]] = {}
    kept: set[tuple[str, str]] = set()
    annotated: list[dict[str, Any]] = []
    for column, values in found.items():
        entry = result.setdefault(column, {})
        entry.setdefault("Description", column.replace("_", " "))
        levels = entry.setdefault("Levels", {})
        existing = entry.get("HED") if isinstance(entry.get("HED"), dict) else {}
        hed[column] = {}
        for value in values:
            description = level_description(column, value, base)
            levels.setdefault(value, description)
            item: dict[str, Any] = {"column": column, "level": value, "description": description}
            if isinstance(existing.get(value), str) and existing[value].strip():
                kept.add((column, value))
                item |= {"hed": existing[value], "decided_by": "sidecar (kept)", "valid": True}
            else:
                input = HedInput(
                    description=description,
                    schema_version=schema,
                    definitions=list(defs.strings) if defs else [],
                )
                item |= _annotate_level(input, deps, config, strategy)
            hed[column][value] = item["hed"]
            annotated.append(item)
            if on_level is not None:
                on_level(item)
    drop_repeats(header, rows, base, result, hed, kept, annotated)
    report = validate_files(sidecar=result, events=events, schema=schema, sidecar_name=name)
    written = write_if_valid(result, report, out or default_sidecar_path(events))
    return EventsAnnotation(sidecar=result, report=report, levels=annotated, out=written)


def _annotate_level(
    input: HedInput, deps: HedDeps, config: RunConfig, strategy: str
) -> dict[str, Any]:
    """One level's HED by ``strategy`` (empty when not valid) and who decided it."""
    decision = annotate(input, deps, config, strategy=strategy)
    run = decision.run
    valid = bool(decision.annotation) and decision.is_valid
    return {
        "hed": decision.annotation if valid else "",
        "decided_by": (run.decided_by or run.strategy) if run else strategy,
        "valid": valid,
    }
