"""A sidecar written for an events file's categorical levels: the levels to annotate, the
HED a row would repeat across columns taken out, and the file written only when valid."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casework.apps.hed.context import (
    ContextReport,
)
from casework.apps.hed.rules import (
    ANNOTATED_LEVELS_MAX,
    categorical_levels,
    drop_repeats_across_columns,
    row_hed_strings,
)
from casework.errors import InputError


@dataclass
class EventsAnnotation:
    """A sidecar written for an events file's categorical levels, and whether it validated."""

    sidecar: dict[str, Any]
    report: ContextReport
    """hedtools' validation of the sidecar with the events file, before anything is written."""
    levels: list[dict[str, Any]] = field(default_factory=list)
    """Per level: column, level, description, hed, and how it was decided (or kept)."""
    out: Path | None = None
    """Where the sidecar was written (None: not written, because it is not valid)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out) if self.out else None,
            "written": self.out is not None,
            "levels": self.levels,
            "validation": self.report.to_dict(),
            "sidecar": self.sidecar,
        }


def default_sidecar_path(events: Path) -> Path:
    """Where a sidecar for ``events`` goes by BIDS naming: ``x_events.tsv`` -> ``x_events.json``."""
    return events.with_suffix(".json")


def levels_to_annotate(
    events: Path, header: list[str], rows: list[list[str]], base: dict[str, Any]
) -> dict[str, list[str]]:
    """The categorical columns of ``events`` and their levels; refused in one sentence when
    there is none or the sidecar's entry for one is not an object."""
    found = categorical_levels(header, rows, base)
    if not found:
        raise InputError(
            f"{events} has no categorical column to annotate (columns of words with at most "
            f"{ANNOTATED_LEVELS_MAX} distinct values, or ones the sidecar lists Levels for)."
        )
    for column in found:
        if column in base and not isinstance(base[column], dict):
            raise InputError(
                f"The sidecar's entry for column {column!r} is not an object; write it as "
                '{"Description": "...", "Levels": {...}, "HED": {...}}.'
            )
    return found


def drop_repeats(
    header: list[str],
    rows: list[list[str]],
    base: dict[str, Any],
    result: dict[str, Any],
    hed: dict[str, dict[str, str]],
    kept: set[tuple[str, str]],
    annotated: list[dict[str, Any]],
) -> None:
    """Put each level's HED into ``result`` without what a row would repeat from an earlier
    column (``rules.drop_repeats_across_columns``); the HED the sidecar had is kept."""
    # A row joins its columns' strings: a tag two columns both wrote would repeat in it.
    carried = row_hed_strings(header, rows, base)
    final = drop_repeats_across_columns(header, rows, hed, frozenset(kept), carried)
    for item in annotated:
        text = final[item["column"]][item["level"]]
        if text != item["hed"]:
            item["repeats_dropped"] = True
        item["hed"] = text
        entry = result[item["column"]]
        entry.setdefault("HED", {})
        if text:
            entry["HED"][item["level"]] = text
        else:  # nothing of its own: the level stays unannotated, and the result says so
            entry["HED"].pop(item["level"], None)
    for column in hed:  # a HED dict with no level is blank (BLANK_HED_STRING): none at all
        if result[column].get("HED") == {}:
            del result[column]["HED"]


def write_if_valid(result: dict[str, Any], report: ContextReport, target: Path) -> Path | None:
    """Write the sidecar to ``target`` whole, then rename, when it validated; else nothing."""
    if not report.valid:
        return None
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(target)
    return target
