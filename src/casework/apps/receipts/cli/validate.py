"""``validate``: one suggested label for one word, through a strategy."""

from __future__ import annotations

from typing import Any

import typer

from casework.apps.receipts.cli.common import console, esc, open_deps, run_config
from casework.apps.receipts.models import LABEL_DEFINITIONS, LabelDecision, WordRef
from casework.clikit import print_json
from casework.registry import strategy_named

__all__ = ["app"]

app = typer.Typer()


@app.command()
def validate(
    receipt: str = typer.Argument(..., help="Receipt slug or key (see `receipts list`)."),
    line: int = typer.Argument(..., help="Line id (see `receipts show RECEIPT`)."),
    word: int = typer.Argument(..., help="Word id within the line."),
    label: str = typer.Argument(
        ..., help=f"Suggested label, one of: {', '.join(LABEL_DEFINITIONS)}."
    ),
    strategy: str = typer.Option(
        "cascade",
        help="cascade (verified examples, rules, similar words, the bundled model's label "
        "choice, then a remote agent when --model names one); memory-offline (the same without "
        "a model); or one layer: memory, rules, baseline, choice, agent.",
    ),
    model: str | None = typer.Option(
        None, help="provider:name for the agent; default: the specialist model setting."
    ),
    reason: str = typer.Option("", help="Why the label was suggested (passed to the agent)."),
    record: bool = typer.Option(
        False,
        "--record",
        help="Append the decision to the word's label history (NEEDS_REVIEW enters the review queue).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Validate a suggested LABEL for one word; prints decision, confidence, reasoning and tool calls."""
    from casework.apps.receipts.models import LabelInput
    from casework.apps.receipts.service import STRATEGIES, validate_word

    strategy_named(STRATEGIES, strategy)  # refused before the stores open
    request = LabelInput(
        receipt=receipt, line_id=line, word_id=word, suggested_label=label, reason=reason
    )
    deps = open_deps()
    done = validate_word(
        deps, request, run_config(deps, model), strategy, record=record, proposed_by="cli"
    )
    calls = _tool_calls(done.result)
    if as_json:
        print_json(
            {
                **done.to_json(),
                "tool_call_details": calls,
                "recorded_label_ids": [lab.id for lab in done.recorded],
            }
        )
        return
    _print_result(done.ref, done.result, done.to_json(), calls)
    if done.recorded:
        last = done.recorded[-1]
        console.print(f"recorded as label {last.id} ({last.status.value})")


def _tool_calls(result: LabelDecision) -> list[dict[str, Any]]:
    if result.run is None:
        return []
    return [
        {"tool": c.name, "args": c.args, "ok": c.ok, "output": c.output[:160]}
        for c in result.run.tool_calls
    ]


def _print_result(
    ref: WordRef, result: LabelDecision, info: dict[str, Any], calls: list[dict[str, Any]]
) -> None:
    colour = {"VALID": "green", "INVALID": "red"}.get(result.verdict, "yellow")
    console.print(
        f"[bold {colour}]{result.verdict}[/] {result.confidence:.0f}%  {esc(ref.word_text)!r} as {ref.suggested_label}"
        f"  ({info['strategy']}{' → ' + info['decided_by'] if info['decided_by'] else ''}"
        f"{': ' + info['model'] if info['model'] else ''}, {info['seconds'] or 0:.1f}s)",
        highlight=False,
    )
    console.print(f"reasoning: {esc(result.reasoning)}", highlight=False)
    if calls:
        console.print("tool calls:")
        for c in calls:
            if c["tool"] == "submit_decision":
                a = c["args"]
                console.print(
                    f"  - submit_decision(verdict={a.get('verdict')}, confidence={a.get('confidence')})",
                    highlight=False,
                    soft_wrap=True,
                )
                continue
            args = ", ".join(f"{k}={v}" for k, v in c["args"].items())
            console.print(
                f"  - {c['tool']}({args}) -> {esc(c['output'][:90])}…",
                highlight=False,
                soft_wrap=True,
            )
    else:
        console.print(
            f"tool calls: {', '.join(result.run.tool_names if result.run else []) or 'none'}"
        )
    if result.unavailable:
        console.print(f"[yellow]unavailable sources:[/] {', '.join(result.unavailable)}")
