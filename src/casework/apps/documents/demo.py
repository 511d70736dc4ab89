"""``casework documents demo``: a demo user, two sample documents, the rules alone and the
default strategy (the cascade: the rules when they found every field asked for, else the
bundled model's field layer; the extraction's method says which wrote it).

The cascade needs the configured models (the bundled one by default); when they cannot be
loaded the demo says so and stops after the rules.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

__all__ = ["DEMO_FILES", "run_demo"]

DEMO_FILES = ["invoice-01.pdf", "form-22.pdf"]
_FILES = Path(__file__).parent / "data" / "eval" / "files"


def run_demo(console: Console | None = None, *, model: str | None = None) -> None:
    from casework.apps.documents.service import DEMO_OWNER, add_file, build_deps, start_extraction
    from casework.errors import CaseworkError
    from casework.runtime.runconfig import RunConfig

    console = console or Console()
    deps = build_deps()
    caller = DEMO_OWNER
    docs = [add_file(deps, caller.user_id, _FILES / name) for name in DEMO_FILES]
    console.print(
        f"[bold]documents[/]: added {', '.join(f'{d.filename} (#{d.id})' for d in docs)} for {caller.name}"
    )
    rules = start_extraction(deps, caller, docs[0].id, strategy="rules", background=False)
    _show(console, deps, caller.user_id, rules.extraction_id, "rules")
    config = RunConfig.of(deps.settings, model)
    try:
        config.models("specialist")
    except CaseworkError as exc:
        console.print(f"  cascade skipped: {exc}")
        return
    cascade = start_extraction(
        deps, caller, docs[1].id, fields=["name", "email", "date"], config=config, background=False
    )
    _show(console, deps, caller.user_id, cascade.extraction_id, "cascade")


def _show(console: Console, deps, user_id: int, extraction_id: int | None, label: str) -> None:
    assert extraction_id is not None
    ext = deps.repo.get_extraction(user_id, extraction_id)
    fields = ", ".join(f"{k}={v!r}" for k, v in list(ext.fields.items())[:6])
    console.print(
        f"  {label}: extraction {ext.id} [bold]{ext.status}[/] ({ext.method}) {fields}"
        + (f" - {ext.reason}" if ext.reason else ""),
        highlight=False,
    )
