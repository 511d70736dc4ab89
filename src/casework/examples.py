"""The faces of the memory of verified answers, built once for every app that declares
``AppSpec.examples``: ``casework <app> examples import|list|show|delete`` (a Typer group),
``/<app>/examples`` over HTTP (an ``APIRouter``), and ``learn_from_review``, which stores the
answer a reviewer verified in the inbox.

Examples come in the evaluation's JSONL format (``casework.evals.datasets``): each line a case
with ``inputs`` and ``expected``; the app's hook turns the inputs into key text and keeps the
verified answer of the expected outputs. A file is read and checked whole before anything is
stored: a bad line is one sentence naming its number, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from casework.clikit import JsonOption, console, print_json
from casework.config import Settings
from casework.errors import InputError
from casework.registry import AppSpec

if TYPE_CHECKING:
    from fastapi import APIRouter

    from casework.runtime.context import Caller
    from casework.runtime.memory import Example, ExampleDraft, ExamplesHook, Memory
    from casework.runtime.review_provider import DecideOutcome

__all__ = [
    "examples_cli",
    "examples_router",
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

    return Memory(open_stores(settings).engine, app, caller)


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
    """The decoded lines of a JSONL file (blank lines skipped), each with its number."""
    if not path.is_file():
        raise InputError(f"No file at {path}: give a JSONL file with one case per line.")
    records = []
    with path.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                records.append((number, json.loads(raw)))
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"Line {number} of {path.name} is not valid JSON ({exc.msg} at column "
                    f"{exc.colno}); nothing was stored."
                ) from None
    return records


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


# ---------------------------------------------------------------------------- the CLI
def _line(e: Example) -> str:
    answer = json.dumps(e.answer, ensure_ascii=False, sort_keys=True)
    key = e.key_text if len(e.key_text) <= 70 else e.key_text[:67] + "..."
    return f"{e.id:>5}  {e.verified_at:%Y-%m-%d %H:%M}  {e.source:<6}  {answer}  {key}"


def examples_cli(spec: AppSpec) -> typer.Typer:
    """``casework <app> examples ...``: the local operator's memory (shared examples)."""
    group = typer.Typer(
        help=f"The {spec.name} memory of verified answers: import, list, show, recall, delete.",
        no_args_is_help=True,
    )

    def memory() -> Memory:
        from casework.config import get_settings

        return memory_for(get_settings(), spec.name, None)

    @group.command("import")
    def import_(
        file: Annotated[Path, typer.Argument(help="JSONL cases: inputs and expected per line.")],
        as_json: JsonOption = False,
    ) -> None:
        """Store each case of FILE (the evaluation's JSONL format) as a verified example."""
        drafts = read_drafts(hook_of(spec), read_jsonl(file))
        from casework.runtime.context import caller_name

        stored = memory().add_many(drafts, verified_by=caller_name(None), source="import")
        if as_json:
            print_json([e.to_dict() for e in stored])
            return
        console.print(f"Stored {len(stored)} {spec.name} example(s) from {file.name}.")

    @group.command("list")
    def list_(
        limit: Annotated[int, typer.Option(min=1, max=MAX_LIST, help="At most this many.")] = 50,
        offset: Annotated[int, typer.Option(min=0, help="Skip this many.")] = 0,
        as_json: JsonOption = False,
    ) -> None:
        """The examples, newest first: id, verified at, source, answer, key text."""
        m = memory()
        found = m.list(limit=limit, offset=offset)
        if as_json:
            print_json([e.to_dict() for e in found])
            return
        if not found:
            console.print(f"No {spec.name} examples yet; add some with `examples import FILE`.")
            return
        for e in found:
            console.print(_line(e), markup=False, highlight=False)
        console.print(f"{len(found)} of {m.count()} example(s).")

    @group.command("show")
    def show(
        example_id: Annotated[int, typer.Argument(help="The example's id (see list).")],
    ) -> None:
        """One example, whole, as JSON."""
        print_json(memory().get(example_id).to_dict())

    @group.command("recall")
    def recall_(
        text: Annotated[str, typer.Argument(help="A case's key text (for vanpool: a reply).")],
        as_json: JsonOption = False,
    ) -> None:
        """What the memory layer answers for TEXT: the answer, its confidence, the examples."""
        from casework.runtime.memory_layer import recall

        _print_recall(recall(memory(), text), as_json)

    @group.command("delete")
    def delete(
        example_id: Annotated[int, typer.Argument(help="The example's id (see list).")],
    ) -> None:
        """Remove one example: no later answer uses it."""
        gone = memory().delete(example_id)
        console.print(f"Deleted {spec.name} example {gone.id} ({gone.key_text[:60]!r}).")

    return group


def _print_recall(found: Any, as_json: bool) -> None:
    from casework.runtime.memory_layer import MEMORY_THRESHOLD

    data = {
        "answer": found.answer,
        "confidence": found.confidence,
        "kept_at_default_threshold": found.confidence >= MEMORY_THRESHOLD,
        "examples_used": [{"id": e.id, "similarity": s} for e, s in found.used],
        "nearest": [{"id": e.id, "similarity": s} for e, s in found.neighbours],
    }
    if as_json:
        print_json(data)
        return
    if found.answer is None:
        near = found.neighbours[0][1] if found.neighbours else None
        console.print("No verified example is near" + (f" (nearest {near:.2f})." if near else "."))
        return
    used = ", ".join(f"{e.id} ({s:.2f})" for e, s in found.used)
    verdict = "answers" if data["kept_at_default_threshold"] else "is not sure enough of"
    console.print(
        f"The memory {verdict} {json.dumps(found.answer)} at confidence "
        f"{found.confidence:.1f} (threshold {MEMORY_THRESHOLD:.0f}); examples used: {used}.",
        markup=False,
        highlight=False,
    )


# ---------------------------------------------------------------------------- the API
def examples_router(spec: AppSpec) -> APIRouter:
    """``/<app>/examples``: a reviewer adds and deletes, any user lists and reads; each caller
    sees its own examples and the shared ones, and deletes only its own. Plain ``def`` routes:
    FastAPI runs them on a worker thread (embedding a case is CPU work)."""
    from fastapi import APIRouter, Body, Depends, Query

    from casework.apikit import allow, get_settings_dep
    from casework.runtime.context import Role

    r = APIRouter(tags=[spec.name])
    name = spec.name

    @r.post("/examples", status_code=201)
    def add(
        case: Any = Body(..., description="A case {inputs, expected}, or a list of them."),
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.add", Role.REVIEWER, own=True),
    ) -> list[dict[str, Any]]:
        given = case if isinstance(case, list) else [case]
        drafts = read_drafts(hook_of(spec), list(enumerate(given, start=1)))
        memory = memory_for(settings, name, caller)
        stored = memory.add_many(drafts, verified_by=caller.name, source="api")
        return [e.to_dict() for e in stored]

    @r.get("/examples")
    def list_(
        limit: int = Query(50, ge=1, le=MAX_LIST),
        offset: int = Query(0, ge=0),
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.list", own=True),
    ) -> list[dict[str, Any]]:
        found = memory_for(settings, name, caller).list(limit=limit, offset=offset)
        return [e.to_dict() for e in found]

    @r.get("/examples/{example_id}")
    def get(
        example_id: int,
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.read", own=True),
    ) -> dict[str, Any]:
        return memory_for(settings, name, caller).get(example_id).to_dict()

    @r.delete("/examples/{example_id}")
    def delete(
        example_id: int,
        settings: Settings = Depends(get_settings_dep),
        caller: Caller = allow(f"{name}.examples.delete", Role.REVIEWER, own=True),
    ) -> dict[str, Any]:
        gone = memory_for(settings, name, caller).delete(example_id)
        return {"deleted": gone.id}

    return r


def _draft(inputs: dict[str, Any], answer: dict[str, Any]) -> ExampleDraft:
    from casework.runtime.memory import ExampleDraft

    return ExampleDraft(inputs=inputs, answer=answer)
