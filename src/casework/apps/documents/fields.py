"""The bundled model's field layer: the fields the rules are not sure of, filled in one call
decoded under a JSON schema, from the document's text in reading order with line numbers.

What a small model does well here is reading: given the lines and a short list of named
fields, copy the value each one has. It does not plan tool calls or decide when it is done.
The rules keep every value they found after its own label (``CONF_LABELLED``); the model is
asked only for the rest, so a document whose rules are sure costs no model call. A value
the model gives is kept at ``CONF_GROUNDED`` when it occurs in the text (after normalising),
else at ``CONF_UNGROUNDED``: a value the document does not show is a guess.

The model is not asked for a field whose readings were wrong more often than right on
development documents (``Readings``: each field's count of the model's readings that differed
from the rules' and how many of them were right, fitted by ``casework eval calibrate`` on an
``--all-layers`` run). On the SROIE development receipts its address readings were wrong every
time (a branch name added, a line left out), so the shipped record keeps it off the address.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from casework.apps.documents.extractor import DOCUMENT_TYPES, classify
from casework.llm.choice import choose
from casework.llm.local import is_local_model
from casework.runtime.prompts import load_prompt
from casework.runtime.usage import Usage

__all__ = [
    "CONF_GROUNDED",
    "CONF_UNGROUNDED",
    "FIELD_HINTS",
    "MAX_LINES",
    "MIN_READINGS",
    "TYPE_THRESHOLD",
    "Readings",
    "ask_fields",
    "document_type",
    "fields_schema",
    "grounded",
    "numbered_lines",
    "readings_path",
    "save_readings",
    "stored_readings",
]

CONF_GROUNDED = 0.7
"""A model value that occurs in the document's text."""
CONF_UNGROUNDED = 0.3
"""A model value the text does not show."""
MAX_LINES = 80
"""Lines of text shown to the model (a long document's first lines carry its header fields)."""
MAX_VALUE_CHARS = 100
"""Longest value the schema lets the model write (an address line fits)."""
TYPE_LINES = 25
"""Lines shown when the model is asked for a document's type (the header says it)."""
TYPE_THRESHOLD = 60.0
"""The model's type is used when its probability is above this; else the document keeps the
generic type (company, date, total)."""

MIN_READINGS = 3
"""A field's record speaks once the model has read it this many times (fewer: it is asked)."""
SHIPPED_READINGS = Path(__file__).parent / "data" / "model-readings.json"
"""The bundled model's record on the development documents (the 44 bundled ones and 40 SROIE
receipts), used until a user fits their own."""


@dataclass(frozen=True)
class Readings:
    """Per field, how many of the model's readings differed from the rules' value and how
    many of those were right."""

    by_field: dict[str, tuple[int, int]] = field(default_factory=dict)
    """name -> (right, read)."""
    source: str = ""

    def trusted(self, name: str) -> bool:
        """Whether to ask the model for the field: too few readings to judge, or right at
        least half the time."""
        right, read = self.by_field.get(name, (0, 0))
        return read < MIN_READINGS or 2 * right >= read

    @classmethod
    def counted(cls, readings: Iterable[tuple[str, bool]], source: str = "") -> Readings:
        """From (field, right) of every reading."""
        by_field: dict[str, tuple[int, int]] = {}
        for name, right in readings:
            was_right, read = by_field.get(name, (0, 0))
            by_field[name] = (was_right + bool(right), read + 1)
        return cls(dict(sorted(by_field.items())), source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "fields": {k: {"right": r, "read": n} for k, (r, n) in self.by_field.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Readings:
        fields = data.get("fields") or {}
        return cls(
            {k: (int(v["right"]), int(v["read"])) for k, v in fields.items()},
            str(data.get("source", "")),
        )


def readings_path(home: Path) -> Path:
    """Where a user's fitted record is stored, beside the app's other calibrations."""
    return home / "calibration" / "documents" / "model-readings.json"


def save_readings(record: Readings, home: Path) -> Path:
    """Store a user's record (whole or not at all)."""
    path = readings_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record.to_dict(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def stored_readings(home: Path) -> Readings:
    """The user's fitted record, else the shipped one."""
    for path in (readings_path(home), SHIPPED_READINGS):
        if path.is_file():
            return Readings.from_dict(json.loads(path.read_text(encoding="utf-8")))
    return Readings()


FIELD_HINTS: dict[str, str] = {
    "company": "the business that issued the document (its name as printed at the top)",
    "customer": "who the document is billed or addressed to",
    "recipient": "the person or organisation the letter is addressed to",
    "date": "the document's date as written",
    "due_date": "the payment due date as written",
    "total": "the final amount to pay, a number as written",
    "subtotal": "the amount before tax, a number as written",
    "tax": "the tax amount (VAT, GST, sales tax), a number as written",
    "currency": "the ISO currency code (USD, EUR, GBP, ...) of the amounts",
    "invoice_number": "the invoice's number or identifier",
    "reference": "the document's reference or case number",
    "address": "the issuer's street address",
}


def numbered_lines(text: str, limit: int = MAX_LINES) -> str:
    """The text's non-empty lines in reading order, each with its line number."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:limit]
    return "\n".join(f"{i:02d}: {line}" for i, line in enumerate(lines, 1))


def fields_schema(names: list[str]) -> dict[str, Any]:
    """One string-or-null property per field, all required: the reply names every field."""
    return {
        "type": "object",
        "properties": {
            name: {"anyOf": [{"type": "string", "maxLength": MAX_VALUE_CHARS}, {"type": "null"}]}
            for name in names
        },
        "required": list(names),
        "additionalProperties": False,
    }


def _plain(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def grounded(value: str, text: str) -> bool:
    """Whether the value occurs in the text, ignoring case, spaces and punctuation."""
    plain = _plain(value)
    return bool(plain) and plain in _plain(text)


def _prompt(text: str, names: list[str]) -> list[Any]:
    wanted = "\n".join(f"- {n}: {FIELD_HINTS.get(n, n.replace('_', ' '))}" for n in names)
    return [
        SystemMessage(load_prompt(__package__, "fields_system")),
        HumanMessage(
            load_prompt(__package__, "fields_task", lines=numbered_lines(text), fields=wanted)
        ),
    ]


def ask_fields(
    model: Any, text: str, names: list[str], *, messages: list[Any] | None = None
) -> tuple[dict[str, Any], Usage]:
    """The model's value (or None) for each name, and what the call cost. The bundled model
    decodes under the JSON schema; another model answers by one forced tool call.
    ``messages``: a prompt of the caller's (the memory's, with verified documents shown
    first) instead of the task's own."""
    started = time.perf_counter()
    messages = messages if messages is not None else _prompt(text, names)
    schema = fields_schema(names)
    usage = Usage(model_calls=1)
    if is_local_model(model):
        # worst case one token per character: the reply can always close its JSON
        budget = 32 + len(names) * (MAX_VALUE_CHARS + 24)
        reply, used = model.generate_constrained(messages, json_schema=schema, max_tokens=budget)
        values = json.loads(reply)
        usage.input_tokens = int(used.get("input_tokens", 0))
        usage.output_tokens = int(used.get("output_tokens", 0))
    else:
        tool = {"title": "FieldValues", "description": "The value of each field.", **schema}
        message = model.bind_tools([tool], tool_choice="FieldValues").invoke(messages)
        calls = getattr(message, "tool_calls", None) or []
        values = dict(calls[0]["args"]) if calls else {}
        meta = getattr(message, "usage_metadata", None) or {}
        usage.input_tokens = int(meta.get("input_tokens", 0))
        usage.output_tokens = int(meta.get("output_tokens", 0))
    usage.wall_seconds = round(time.perf_counter() - started, 3)
    out: dict[str, Any] = {}
    for name in names:
        value = values.get(name)
        out[name] = str(value).strip() if isinstance(value, str) and value.strip() else None
    return out, usage


def document_type(model: Any, text: str) -> tuple[str, Usage | None]:
    """The document's type: its cue words', else the bundled model's choice among the types
    (scored options, ``casework.llm.choice``) when it is sure, else ``document``. The usage is
    None when no model was asked."""
    kind = classify(text)
    if kind != "document":
        return kind, None
    messages = [
        SystemMessage(load_prompt(__package__, "type_system")),
        HumanMessage(load_prompt(__package__, "type_task", lines=numbered_lines(text, TYPE_LINES))),
    ]
    picked = choose(model, messages, list(DOCUMENT_TYPES))
    sure = picked.confidence > TYPE_THRESHOLD
    return (picked.option if sure else "document"), picked.usage
