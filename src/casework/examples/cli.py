"""``casework <app> examples import|list|show|recall|delete``: the local operator's memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from casework.clikit import JsonOption, console, print_json
from casework.examples import MAX_LIST, hook_of, memory_for, read_drafts, read_jsonl

if TYPE_CHECKING:
    from casework.registry import AppSpec
    from casework.runtime.memory import Example, Memory

__all__ = ["examples_cli"]


def _line(e: Example) -> str:
    answer = json.dumps(e.answer, ensure_ascii=False, sort_keys=True)
    flat = " ".join(e.key_text.split())  # a document's key spans lines: one line each
    key = flat if len(flat) <= 70 else flat[:67] + "..."
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
