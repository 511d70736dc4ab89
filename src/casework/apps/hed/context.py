"""HED in a dataset's context: definitions, BIDS sidecars and events files.

HED strings in a dataset lean on their sidecar: ``Def/Name`` and ``(Def/Name, Onset)`` mean
something only where a ``Definition`` names them, a categorical column's HED is written per
level, and a ``{column}`` splices another column in. Everything here reads the user's files
and hands them to hedtools' own API (``DefinitionDict``, ``Sidecar``, ``TabularInput`` and
their validators, as its BIDS validation runs them); this module only reads files, says where
each issue is (file, column, level, row) and refuses unreadable input in one sentence.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from casework.apps.hed.rules import defined_names
from casework.apps.hed.validation import definition_dict, load_schema
from casework.errors import InputError

__all__ = [
    "MAX_FILE_BYTES",
    "ContextReport",
    "Definitions",
    "Located",
    "load_definitions",
    "read_events",
    "read_sidecar",
    "sidecar_definitions",
    "validate_files",
]

MAX_FILE_BYTES = 20 * 1024 * 1024
"""A sidecar, events or definitions file larger than this is refused: BIDS events files of
hours of recording are a few MB."""

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Located:
    """One hedtools issue with the HED specification's code and where it is."""

    code: str
    message: str
    severity: Severity = "error"
    file: str = ""
    column: str = ""
    level: str = ""
    """The categorical level (the sidecar's key under ``HED``), when the issue is in one."""
    row: int | None = None
    """The events file's line (the header is line 1), when the issue is in a row."""
    hed: str = ""
    """The HED string the issue was found in."""

    @property
    def where(self) -> str:
        """'events.tsv row 4', 'events.json column event_type level show_face', ..."""
        parts = [self.file] if self.file else []
        if self.column:
            parts.append(f"column {self.column}")
        if self.level:
            parts.append(f"level {self.level}")
        if self.row is not None:
            parts.append(f"row {self.row}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
            "file": self.file,
            "column": self.column,
            "level": self.level,
            "row": self.row,
            "hed": self.hed,
        }


_SPANS = re.compile(r"\s*Problem spans string indexes:[\s\d,]*$")


def _located(raw: dict[str, Any]) -> Located:
    """A hedtools issue dict (code, message, severity, ``ec_*`` context) as a ``Located``."""
    from hed.errors import ErrorSeverity

    row = raw.get("ec_row")
    return Located(
        code=str(raw.get("code", "")),
        # hedtools appends character offsets; the issue carries the string instead.
        message=_SPANS.sub("", " ".join(str(raw.get("message", "")).split())).strip(),
        severity="warning" if raw.get("severity") == ErrorSeverity.WARNING else "error",
        file=Path(str(raw.get("ec_filename") or "")).name,
        column=str(raw.get("ec_sidecarColumnName") or raw.get("ec_column") or ""),
        level=str(raw.get("ec_sidecarKeyName") or ""),
        row=int(row) if isinstance(row, int | float | str) and str(row).isdigit() else None,
        hed=str(raw.get("ec_HedString") or ""),
    )


# ---------------------------------------------------------------------- reading files
def _read_text(path: Path, what: str) -> str:
    if not path.is_file():
        raise InputError(f"{path} does not exist; pass the path of {what}.")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise InputError(
            f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; split it or pass "
            f"{what} of a single recording."
        )
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"Cannot read {path} ({exc}); pass {what} saved as UTF-8.") from None


def read_sidecar(path: Path) -> dict[str, Any]:
    """A BIDS JSON sidecar as a dict: one sentence when it is not a JSON object."""
    text = _read_text(path, "a BIDS JSON sidecar (events.json)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it or pass the "
            "events.json sidecar."
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            f"{path} holds a JSON {type(data).__name__}, not an object; a sidecar maps each "
            'column name to its entry ({"event_type": {"HED": {...}}}).'
        )
    return data


def read_events(path: Path) -> tuple[list[str], list[list[str]]]:
    """An events file's header and rows (tab-separated, as BIDS writes them)."""
    text = _read_text(path, "a BIDS events file (events.tsv)")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputError(
            f"{path} is empty; an events file has a header line and one row per event."
        )
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    header = rows[0]
    if len(header) < 2:
        raise InputError(
            f"{path} has a single column ({header[0][:40]!r}); BIDS events files are "
            "tab-separated with a header such as 'onset<TAB>duration<TAB>event_type'."
        )
    return header, rows[1:]


def _hed_entries(sidecar: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(column, level or '', HED string) of every HED entry of a sidecar."""
    for column, entry in sidecar.items():
        hed = entry.get("HED") if isinstance(entry, dict) else None
        if isinstance(hed, str):
            yield column, "", hed
        elif isinstance(hed, dict):
            for level, text in hed.items():
                if isinstance(text, str):
                    yield column, str(level), text


# ---------------------------------------------------------------------- definitions
@dataclass(frozen=True)
class Definitions:
    """The definitions a file gives, as strings hedtools parses, and their own issues."""

    source: str
    """The file they were read from."""
    strings: tuple[str, ...]
    names: tuple[str, ...] = ()
    """The defined names (``Acc/#`` for a definition that takes a value)."""
    issues: tuple[Located, ...] = field(default=())
    """Errors in the definitions themselves (an unknown tag in a definition's body, ...)."""

    @property
    def valid(self) -> bool:
        return not any(i.severity == "error" for i in self.issues)


def _sidecar_sources(sidecar: dict[str, Any], name: str) -> list[tuple[str, Located]]:
    return [
        (text, Located("", "", file=name, column=column, level=level))
        for column, level, text in _hed_entries(sidecar)
        if "definition/" in text.casefold()
    ]


def _definition_sources(path: Path) -> list[tuple[str, Located]]:
    """Each string of ``path`` that holds a definition, with where it is: a JSON sidecar's HED
    entries, else a text or TSV file's cells (one ``(Definition/Name, (...))`` per line or cell)."""
    if path.suffix.lower() == ".json":
        return _sidecar_sources(read_sidecar(path), path.name)
    text = _read_text(path, "a file of definitions")
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for cell in line.split("\t"):
            if "definition/" in cell.casefold():
                found.append((cell.strip(), Located("", "", file=path.name, row=number)))
    return found


def load_definitions(path: Path, schema: str) -> Definitions:
    """The definitions of ``path`` (a JSON sidecar's ``Definition`` entries, or a text / TSV
    file of ``(Definition/Name, (...))`` strings), parsed by hedtools' ``DefinitionDict``;
    errors in a definition are its ``issues``, with the line or the sidecar entry."""
    sources = _definition_sources(path)
    if not sources:
        raise InputError(
            f"{path} holds no definitions; pass a JSON sidecar with Definition entries or a "
            "text file with one (Definition/Name, (...)) per line."
        )
    return _parse_definitions(sources, str(path), schema)


def sidecar_definitions(sidecar: dict[str, Any], name: str, schema: str) -> Definitions | None:
    """The definitions a sidecar's HED entries hold (None when it holds none)."""
    sources = _sidecar_sources(sidecar, name)
    return _parse_definitions(sources, name, schema) if sources else None


def _parse_definitions(sources: list[tuple[str, Located]], source: str, schema: str) -> Definitions:
    from hed import HedString
    from hed.errors import ErrorContext, ErrorHandler
    from hed.models import DefinitionDict

    hed_schema = load_schema(schema)
    issues: list[Located] = []
    defs = DefinitionDict()
    for text, where in sources:  # each string alone, so an issue knows its line or entry
        handler = ErrorHandler(check_for_warnings=False)
        handler.push_error_context(ErrorContext.FILE_NAME, where.file)
        if where.column:
            handler.push_error_context(ErrorContext.SIDECAR_COLUMN_NAME, where.column)
        if where.level:
            handler.push_error_context(ErrorContext.SIDECAR_KEY_NAME, where.level)
        if where.row is not None:
            handler.push_error_context(ErrorContext.ROW, where.row)
        string = HedString(text, hed_schema)
        handler.push_error_context(ErrorContext.HED_STRING, string)
        # Errors in the definition, or a name defined twice with different contents.
        issues += [_located(raw) for raw in defs.check_for_definitions(string, handler)]
    strings = tuple(text for text, _ in sources)
    # Names as the strings spell them (hedtools keeps them case-folded), the ones it accepted.
    names = tuple(n for n in defined_names(strings) if n.split("/")[0].casefold() in defs.defs)
    return Definitions(source, strings, names, tuple(issues))


# ---------------------------------------------------------------------- sidecars and events
@dataclass(frozen=True)
class ContextReport:
    """What hedtools' BIDS validation says about a sidecar (and an events file)."""

    schema: str
    files: tuple[str, ...]
    errors: tuple[Located, ...]
    warnings: tuple[Located, ...]
    definitions: int = 0
    """How many definitions were in context (the sidecar's and the ``--definitions`` file's)."""

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def codes(self) -> list[str]:
        return sorted({i.code for i in self.errors})

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": list(self.files),
            "schema": self.schema,
            "valid": self.valid,
            "definitions": self.definitions,
            "errors": [i.to_dict() for i in self.errors],
            "warnings": [i.to_dict() for i in self.warnings],
        }


def validate_files(
    *,
    sidecar: Path | dict[str, Any] | None = None,
    events: Path | None = None,
    schema: str,
    definitions: Definitions | None = None,
    sidecar_name: str = "",
) -> ContextReport:
    """Validate a sidecar, an events file, or both as hedtools' BIDS validation does: the
    sidecar per column and per categorical level (with its own and the extra definitions,
    ``{column}`` references), then the events file's columns, HED column and assembled rows
    (``Onset``/``Offset`` against the onsets), the sidecar validated once as in a BIDS file
    group. ``sidecar`` may be a dict (one not written yet), named ``sidecar_name``."""
    from hed import Sidecar, TabularInput
    from hed.errors import ErrorHandler
    from hed.errors.exceptions import HedFileError

    if sidecar is None and events is None:
        raise InputError("Nothing to validate; pass a sidecar (--sidecar) or an events file.")
    hed_schema = load_schema(schema)
    extra = definition_dict(schema, definitions.strings) if definitions else None
    files: list[str] = []
    side = None
    if sidecar is not None:
        data = sidecar if isinstance(sidecar, dict) else read_sidecar(sidecar)
        name = sidecar_name or (sidecar.name if isinstance(sidecar, Path) else "sidecar.json")
        side = Sidecar(io.StringIO(json.dumps(data)), name=name)
        files.append(name)
    handler = ErrorHandler(check_for_warnings=True)
    raw: list[dict[str, Any]] = []
    if side is not None:
        raw += side.validate(hed_schema, extra_def_dicts=extra, error_handler=handler)
    if events is not None:
        read_events(events)  # refuses an empty or non-tabular file in one sentence
        files.append(events.name)
        try:
            table = TabularInput(str(events), sidecar=side, name=events.name)
        except (HedFileError, ValueError) as exc:
            raise InputError(
                f"hedtools cannot read {events} as an events file ({exc}); pass a "
                "tab-separated file with a header line."
            ) from None
        # As hedtools' BIDS validation runs a file group: the sidecar once (above), then
        # the events file against it without validating it again, so an error in the
        # sidecar does not hide the rows' own (an invalid level simply adds nothing).
        raw += table.validate(
            hed_schema, extra_def_dicts=extra, error_handler=handler, validate_sidecar=False
        )
    issues = [_located(i) for i in raw]
    if definitions is not None:
        issues = [*definitions.issues, *issues]
    in_context = len(extra.defs) if extra is not None else 0
    if side is not None:
        in_context += len(side.get_def_dict(hed_schema).defs)
    return ContextReport(
        schema=schema,
        files=tuple(files),
        errors=tuple(i for i in issues if i.severity == "error"),
        warnings=tuple(i for i in issues if i.severity == "warning"),
        definitions=in_context,
    )
