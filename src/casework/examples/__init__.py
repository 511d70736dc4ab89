"""The faces of the memory of verified answers, built once for every app that declares
``AppSpec.examples``: ``casework <app> examples import|list|show|delete`` (a Typer group),
``/<app>/examples`` over HTTP (an ``APIRouter``), and ``learn_from_review``, which stores the
answer a reviewer verified in the inbox. The faces are modules of their own (``cli``,
``api``) so a CLI's start-up loads neither FastAPI nor the settings.

Examples come in the evaluation's JSONL format (``casework.evals.datasets``): each line a case
with ``inputs`` and ``expected``; the app's hook turns the inputs into key text and keeps the
verified answer of the expected outputs. A file is read and checked whole before anything is
stored: a bad line is one sentence naming its number, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from casework.errors import InputError

if TYPE_CHECKING:
    from casework.config import Settings
    from casework.registry import AppSpec
    from casework.runtime.context import Caller
    from casework.runtime.memory import Example, ExampleDraft, ExamplesHook, Memory, ScopeOf
    from casework.runtime.review_provider import DecideOutcome

__all__ = [
    "MAX_LIST",
    "hook_of",
    "learn_from_review",
    "memory_for",
    "read_drafts",
    "read_jsonl",
]

MAX_LIST = 500
"""The most examples one list answers (page with ``offset``)."""


def hook_of(spec: AppSpec) -> ExamplesHook:
    if spec.examples is None:
        raise InputError(f"The {spec.name} app keeps no examples.")
    hook: ExamplesHook = spec.examples()
    return hook


def memory_for(settings: Settings, app: str, caller: Caller | None) -> Memory:
    """The memory of ``app`` in the settings' store, as ``caller`` sees it."""
    from casework.runtime.memory import Memory
    from casework.stores import open_stores

    return Memory(open_stores(settings).engine, app, caller, scope_of=scope_of(app))


def scope_of(app: str) -> ScopeOf | None:
    """The app's ``ExamplesHook.scope``, when it has one (it is optional; an app that is not
    registered, a test's, has none)."""
    from casework.registry import all_apps

    spec = all_apps().get(app)
    if spec is None or spec.examples is None:
        return None
    scope: ScopeOf | None = getattr(spec.examples(), "scope", None)
    return scope


def read_drafts(
    hook: ExamplesHook, records: Sequence[tuple[int, Any]]
) -> list[tuple[str, ExampleDraft]]:
    """``(key text, draft)`` per decoded case ``(line number, record)``; the first bad one is
    an ``InputError`` naming its line, so a caller stores all or nothing."""
    from casework.evals.datasets import parse_case

    drafts = []
    for number, record in records:
        try:
            case = parse_case(record, line=number)
            key = hook.key_text(case.inputs)
            answer = hook.answer_of(case.expected)
        except ValueError as exc:
            raise InputError(f"Line {number}: {exc}; nothing was stored.") from None
        drafts.append((key, _draft(case.inputs, answer)))
    if not drafts:
        raise InputError("No examples given: one JSON case per line, with inputs and expected.")
    return drafts


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """The decoded lines of a JSONL file (blank lines skipped), each with its number. A
    relative ``inputs.file`` is read from the JSONL's folder, as an evaluation reads it (a
    documents dataset names its scans that way)."""
    if not path.is_file():
        raise InputError(f"No file at {path}: give a JSONL file with one case per line.")
    records = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"{path.name} is not UTF-8 text; save it as UTF-8 JSON Lines, one case per line; "
            "nothing was stored."
        ) from None
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            records.append((number, _files_beside(json.loads(raw), path.parent)))
        except json.JSONDecodeError as exc:
            raise InputError(
                f"Line {number} of {path.name} is not valid JSON ({exc.msg} at column "
                f"{exc.colno}); nothing was stored."
            ) from None
    return records


def _files_beside(record: Any, folder: Path) -> Any:
    inputs = record.get("inputs") if isinstance(record, dict) else None
    if isinstance(inputs, dict) and isinstance(inputs.get("file"), str):
        given = Path(inputs["file"])
        if not given.is_absolute():
            record["inputs"] = {**inputs, "file": str((folder / given).resolve())}
    return record


def learn_from_review(
    settings: Settings, app: str, outcome: DecideOutcome, caller: Caller
) -> Example | None:
    """The answer a reviewer verified in the inbox, stored as an example (the decider is
    ``verified_by``), when the decision applied and the provider named one."""
    if not outcome.applied or outcome.example is None:
        return None
    draft = outcome.example
    try:
        key = hook_of(_spec(app)).key_text(draft.inputs)
    except ValueError as exc:
        raise InputError(
            f"The decision was kept, but its answer is no {app} example: {exc}."
        ) from None
    return memory_for(settings, app, caller).add(
        key,
        draft.inputs,
        draft.answer,
        verified_by=caller.name,
        source="review",
        run_id=draft.run_id,
    )


def _spec(app: str) -> AppSpec:
    from casework.registry import get_app

    return get_app(app)


def _draft(inputs: dict[str, Any], answer: dict[str, Any]) -> ExampleDraft:
    from casework.runtime.memory import ExampleDraft

    return ExampleDraft(inputs=inputs, answer=answer)
