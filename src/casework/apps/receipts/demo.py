"""``casework demo`` for receipts: seed, validate two words with the baseline, one with the
bundled local model (skipped with a note when the model is not prepared)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from casework.apps.receipts.models import ValidationResult

__all__ = ["DEMO_WORDS", "run_demo"]

# (receipt, line, word, suggested label): a right and a wrong suggestion, then one for the agent.
DEMO_WORDS = [
    ("costco", 42, 3, "GRAND_TOTAL"),
    ("wildfork", 12, 4, "UNIT_PRICE"),
    ("chevron", 8, 1, "LINE_TOTAL"),
]


def run_demo(console: Console | None = None, *, model: str | None = None) -> None:
    from casework.apps.receipts.deps import build_deps
    from casework.apps.receipts.service import make_validator, resolve_ref, seed
    from casework.errors import CaseworkError

    console = console or Console()
    deps = build_deps()
    report = seed(deps)
    console.print(
        f"[bold]receipts[/]: {len(deps.repo.list_receipts())} receipts ({len(report.added)} new), {report.indexed_words} words embedded"
    )
    baseline = make_validator("baseline", deps)
    for receipt, line, word, label in DEMO_WORDS[:2]:
        _show(console, baseline.validate(resolve_ref(deps, receipt, line, word, label)))
    receipt, line, word, label = DEMO_WORDS[2]
    try:
        agent = make_validator("agent", deps, model=model)
    except CaseworkError as exc:
        console.print(f"  agent skipped: {exc}")
        return
    _show(console, agent.validate(resolve_ref(deps, receipt, line, word, label)))


def _show(console: Console, r: ValidationResult) -> None:
    who = f"{r.strategy}" + (f" ({r.model})" if r.model else "")
    console.print(
        f"  {r.word_text!r} as {r.suggested_label}: [bold]{r.decision}[/] {r.confidence:.0f}% by {who} "
        f"in {r.seconds:.1f}s, tools: {', '.join(r.tool_calls) or '-'}",
        highlight=False,
    )
    console.print(f"    {r.reasoning[:160]}", highlight=False)
