"""What the HED schema answers: HED strings validated (with a dataset's definitions), a BIDS
sidecar and events file, a remediation hint, the validators' bench, the vocabulary listing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.apps.hed.context import ContextReport, Definitions, load_definitions, validate_files
from casework.apps.hed.dataset import load_eval_cases, load_validator_cases
from casework.apps.hed.models import DEFAULT_SCHEMA, ValidatorKind
from casework.apps.hed.remediation import augment
from casework.apps.hed.validation import Issue, ValidationResult, check_schema, validate_many
from casework.apps.hed.validation import bench_validators as bench_strings
from casework.apps.hed.vocabulary import estimate_tokens, load_vocabulary
from casework.errors import InputError

__all__ = [
    "VocabularyListing",
    "bench_validators",
    "read_definitions",
    "remediation_hint",
    "validate_dataset",
    "validate_strings",
    "vocabulary_listing",
]


def validate_strings(
    strings: Sequence[str],
    schema: str = DEFAULT_SCHEMA,
    *,
    validator: ValidatorKind = "auto",
    definitions: Definitions | None = None,
) -> list[ValidationResult]:
    """Validate HED strings with the JS validator (hedtools as the fallback, or as chosen);
    with ``definitions`` (a dataset's), hedtools validates them in that context."""
    strings = list(strings)
    for n, text in enumerate(strings, start=1):
        if not text.strip():
            raise InputError(
                f'HED string {n} is empty; pass a HED string such as "Sensory-event, Red".'
            )
    defs = definitions.strings if definitions is not None else ()
    return validate_many(strings, schema, validator=validator, definitions=defs)


def read_definitions(path: Path, schema: str = DEFAULT_SCHEMA) -> Definitions:
    """The definitions of a file: a JSON sidecar's ``Definition`` entries, or a text / TSV file
    of ``(Definition/Name, (...))`` strings; errors in them are the result's ``issues``."""
    return load_definitions(path, check_schema(schema))


def validate_dataset(
    *,
    sidecar: Path | None = None,
    events: Path | None = None,
    schema: str = DEFAULT_SCHEMA,
    definitions: Path | None = None,
) -> ContextReport:
    """A BIDS sidecar and/or events file validated as hedtools' BIDS validation does, with the
    extra definitions of ``definitions`` (a file) in context."""
    check_schema(schema)
    if sidecar is None and events is None:
        raise InputError(
            "Nothing to validate; pass --sidecar events.json (and --events events.tsv), or "
            "HED strings."
        )
    defs = load_definitions(definitions, schema) if definitions is not None else None
    return validate_files(sidecar=sidecar, events=events, schema=schema, definitions=defs)


def remediation_hint(issue: Issue, schema: str = DEFAULT_SCHEMA) -> str:
    """What the annotation agent is told about one error: its last line names the closest
    valid tags of the schema."""
    return augment(issue, load_vocabulary(schema)).splitlines()[-1].strip()


def bench_validators(schema: str = DEFAULT_SCHEMA, *, repeat: int = 3) -> dict[str, Any]:
    """Speed and agreement of the JS and the Python validator on the project's strings (the
    validator cases and the gold annotations)."""
    strings = [c["hed"] for c in load_validator_cases()]
    strings += [c["expected"]["hed"] for c in load_eval_cases()]
    return bench_strings(strings, schema, repeat=repeat)


@dataclass(frozen=True)
class VocabularyListing:
    tags: dict[str, dict[str, Any]]
    """Every tag: its long form, units, rules."""
    text: str
    """The vocabulary as the annotation prompt carries it."""
    tokens: int
    """About how many tokens ``text`` is."""


def vocabulary_listing(schema: str = DEFAULT_SCHEMA, *, full: bool = False) -> VocabularyListing:
    """The schema's vocabulary as the annotation prompt carries it (compact unless ``full``)."""
    vocab = load_vocabulary(check_schema(schema))
    text = vocab.prompt_text(compact=not full)
    return VocabularyListing(
        tags={name: vars(info) for name, info in sorted(vocab.tags.items())},
        text=text,
        tokens=estimate_tokens(text),
    )
