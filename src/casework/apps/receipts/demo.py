"""``casework demo`` for receipts: seed, validate two words with the baseline, one with the
agent on the bundled local model, then the word the baseline was unsure of with the default
strategy, the cascade: its rules settle it, so no model runs (the model steps are skipped
with a note when the model is not prepared)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from rich.console import Console

from casework.llm import RoleModels
from casework.runtime.runconfig import RunConfig

__all__ = ["DEMO_WORDS", "run_demo"]

# (receipt, line, word, suggested label): a right and a wrong suggestion, then one for the agent.
DEMO_WORDS = [
    ("costco", 42, 3, "GRAND_TOTAL"),
    ("wildfork", 12, 4, "UNIT_PRICE"),
    ("chevron", 8, 1, "LINE_TOTAL"),
]


def run_demo(console: Console | None = None, *, model: BaseChatModel | str | None = None) -> None:
    """``model``: a chat model or a ``provider:name`` spec for the agent (default: settings)."""
    from casework.apps.receipts.deps import build_deps
    from casework.apps.receipts.models import LabelInput
    from casework.apps.receipts.service import seed, validate_word
    from casework.config import get_settings
    from casework.errors import CaseworkError

    console = console or Console()
    settings = get_settings()
    if isinstance(model, BaseChatModel):
        config = RunConfig(models=RoleModels.given(model), traces=settings.traces_dir)
    else:
        config = RunConfig.of(settings, model)
    deps = build_deps(settings)
    report = seed(deps)
    console.print(
        f"[bold]receipts[/]: {len(deps.repo.list_receipts())} receipts ({len(report.added)} new), {report.indexed_words} words embedded"
    )
    for k, (receipt, line, word, label) in enumerate(DEMO_WORDS):
        request = LabelInput(receipt=receipt, line_id=line, word_id=word, suggested_label=label)
        name = "baseline" if k < 2 else "agent"
        try:
            done = validate_word(deps, request, config, name)
        except CaseworkError as exc:
            console.print(f"  {name} skipped: {exc}")
            return
        _show(console, done.to_json())
    receipt, line, word, label = DEMO_WORDS[1]
    request = LabelInput(receipt=receipt, line_id=line, word_id=word, suggested_label=label)
    try:
        done = validate_word(deps, request, config)  # the default strategy
    except CaseworkError as exc:
        console.print(f"  cascade skipped: {exc}")
        return
    _show(console, done.to_json())


def _show(console: Console, r: dict[str, Any]) -> None:
    who = f"{r['strategy']}" + (f" ({r['model']})" if r["model"] else "")
    if r.get("decided_by"):
        who += f", decided by its {r['decided_by']} layer"
    console.print(
        f"  {r['word_text']!r} as {r['suggested_label']}: [bold]{r['verdict']}[/] {r['confidence']:.0f}% by {who} "
        f"in {r['seconds'] or 0:.1f}s, tools: {', '.join(r['tool_calls']) or '-'}",
        highlight=False,
    )
    console.print(f"    {r['reasoning'][:160]}", highlight=False)
