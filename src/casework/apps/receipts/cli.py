"""``casework receipts …``: import, seed, inspect, validate, review, harmonise.

Thin: every command builds deps, calls ``service`` and prints (evaluation is ``casework eval
receipts``). Errors a user can cause raise CaseworkError subclasses; the root CLI prints them as
one sentence.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from casework.apps.receipts.models import (
    LABEL_DEFINITIONS,
    LabelDecision,
    ValidationStatus,
    WordRef,
)
from casework.clikit import AddressOption, ConcurrencyOption, ExecutorOption, print_json, progress
from casework.errors import InputError
from casework.registry import strategy_named

__all__ = ["app"]

# Piped output (README examples, CI logs) gets 120 columns rather than Rich's 80.
console = Console(width=None if sys.stdout.isatty() else 120)
app = typer.Typer(
    help="Validate suggested labels of receipt words. Start with `casework receipts seed`, then "
    "`casework receipts show costco` and `casework receipts validate costco 40 2 GRAND_TOTAL`.",
    no_args_is_help=True,
)
review_app = typer.Typer(
    help="The NEEDS_REVIEW queue: list, accept, reject.", invoke_without_command=True
)
edge_app = typer.Typer(
    help="Known invalid patterns (label + regex) used by check_edge_cases.", no_args_is_help=True
)
app.add_typer(review_app, name="review")
app.add_typer(edge_app, name="edge-cases")


def _deps(*, with_vectors: bool = True) -> Any:
    """Deps on the configured stores."""
    from casework.apps.receipts.deps import build_deps
    from casework.config import get_settings

    return build_deps(get_settings(), with_vectors=with_vectors)


def _config(deps: Any, model: str | None) -> Any:
    """The run config of a command: ``model`` (provider:name) for every model role."""
    from casework.runtime.runconfig import RunConfig

    return RunConfig.of(deps.settings, model)


# ---------------------------------------------------------------------- data
@app.command("import")
def import_cmd(
    files: list[Path] = typer.Argument(
        ..., help="Labelled receipt JSON files (tokens, bboxes, ner_tags, merchant_name)."
    ),
    pending: bool = typer.Option(
        False, "--pending", help="Store the labels as PENDING instead of VALID."
    ),
    no_index: bool = typer.Option(
        False, "--no-index", help="Skip embedding the words (run `receipts index` later)."
    ),
    user: str | None = typer.Option(
        None,
        "--user",
        help="Make the receipts this user's (only they see them); default: shared with every user.",
    ),
    mapping: list[str] = typer.Option(
        [],
        "--map",
        metavar="OLD=NEW",
        help="Rename a label the files use to the taxonomy's name (repeatable): "
        "--map ADDRESS=ADDRESS_LINE.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import labelled receipts: all files in one transaction, then embed their words.

    Without --user the local operator imports them as shared receipts: every user reads them,
    only reviewers and admins change their labels."""
    from casework.apps.receipts.service import import_files
    from casework.clikit import caller_named

    deps = _deps(with_vectors=not no_index)
    if user is not None:
        deps = deps.for_tenant(caller_named(user, deps.settings))
    rename = {}
    for pair in mapping:
        old, sep, new = pair.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise InputError(f"--map {pair}: write it as OLD=NEW, e.g. --map ADDRESS=ADDRESS_LINE.")
        rename[old.strip()] = new.strip()
    status = ValidationStatus.PENDING if pending else ValidationStatus.VALID
    report = import_files(deps, files, status=status, index=not no_index, rename=rename)
    _print_import(report, as_json)


@app.command()
def seed(
    no_index: bool = typer.Option(False, "--no-index", help="Skip embedding the words."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import the bundled sample receipts (idempotent) and index every receipt."""
    from casework.apps.receipts.service import seed as seed_fn

    report = seed_fn(_deps(with_vectors=not no_index), index=not no_index)
    _print_import(report, as_json)


def _print_import(report: Any, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "added": [
                    {
                        "slug": r.slug,
                        "key": r.key,
                        "merchant": r.merchant_name,
                        "lines": r.line_count,
                        "words": r.word_count,
                    }
                    for r in report.added
                ],
                "skipped": report.skipped,
                "indexed_words": report.indexed_words,
                "vector_error": report.vector_error,
                "unknown_labels": report.unknown_labels,
            }
        )
        return
    for r in report.added:
        console.print(
            f"[green]imported[/] {r.slug}  {r.merchant_name}  ({r.line_count} lines, {r.word_count} words)"
        )
    for key in report.skipped:
        console.print(f"[dim]already imported, skipped[/] {key}")
    console.print(
        f"{len(report.added)} receipts imported, {len(report.skipped)} skipped, {report.indexed_words} words embedded."
    )
    if report.vector_error:
        console.print(
            f"[yellow]warning:[/] words not embedded ({report.vector_error}); run `casework receipts index` later."
        )
    for source, names in report.unknown_labels.items():
        console.print(
            f"[yellow]warning:[/] {source} uses labels the taxonomy does not define "
            f"({', '.join(names)}): they were imported as given, and no strategy can check "
            "them until they are mapped to the taxonomy's names (`--map OLD=NEW` on import)."
        )


@app.command()
def index(
    everything: bool = typer.Option(
        False, "--all", help="Re-embed every receipt (repairs stale label metadata)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Embed the words of receipts missing from the vector store (idempotent)."""
    from casework.apps.receipts.service import index as index_words

    n = index_words(_deps(), everything=everything)
    print_json({"indexed_words": n}) if as_json else console.print(f"{n} words embedded.")


@app.command("list")
def list_cmd(
    merchant: str | None = typer.Option(None, help="Only this merchant."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List imported receipts with their slugs (use a slug wherever RECEIPT is asked)."""
    receipts = _deps(with_vectors=False).repo.list_receipts(merchant=merchant)
    if as_json:
        print_json([r.model_dump(mode="json") | {"key": r.key} for r in receipts])
        return
    table = Table("slug", "merchant", "lines", "words", "key")
    for r in receipts:
        table.add_row(r.slug, r.merchant_name, str(r.line_count), str(r.word_count), r.key)
    console.print(table)
    if not receipts:
        console.print(
            "No receipts yet: run `casework receipts seed` or `casework receipts import FILE`."
        )


@app.command()
def show(
    receipt: str = typer.Argument(..., help="Receipt slug or key."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Print a receipt line by line with word ids and current labels."""
    from casework.apps.receipts.service import show_receipt

    view = show_receipt(_deps(with_vectors=False), receipt)
    r, words, labels = view.receipt, view.words, view.labels
    if as_json:
        print_json(
            {
                "receipt": r.slug,
                "key": r.key,
                "merchant": r.merchant_name,
                "words": [
                    {
                        "line_id": w.line_id,
                        "word_id": w.word_id,
                        "text": w.text,
                        "labels": labels.get(w.id, []),
                    }
                    for w in words
                ],
            }
        )
        return
    console.print(f"[bold]{r.slug}[/]  {r.merchant_name}  key {r.key}")
    by_line: dict[int, list[str]] = {}
    for w in words:
        tag = f"[cyan][{','.join(labels[w.id])}][/]" if w.id in labels else ""
        by_line.setdefault(w.line_id, []).append(f"[dim]{w.word_id}:[/]{_esc(w.text)}{tag}")
    for line_id, parts in by_line.items():
        console.print(f"L{line_id:<3} " + "  ".join(parts), highlight=False)


def _esc(text: str) -> str:
    return text.replace("[", r"\[")


@app.command()
def history(
    receipt: str = typer.Argument(..., help="Receipt slug or key."),
    line: int = typer.Argument(..., help="Line id (see `receipts show`)."),
    word: int = typer.Argument(..., help="Word id within the line."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The audit trail of one word: every label row, who proposed and validated it, and what replaced what."""
    from casework.apps.receipts.service import word_history

    found = word_history(_deps(with_vectors=False), receipt, line, word)
    r, w, labels = found.receipt, found.word, found.labels
    if as_json:
        print_json([lab.model_dump(mode="json") for lab in labels])
        return
    console.print(f"{r.slug} line {line} word {word}: {_esc(w.text)!r}  (* = current)")
    table = Table(
        "id",
        "label",
        "status",
        "proposed by",
        "validated by",
        "replaces",
        "from",
        "at",
        "reasoning",
    )
    for col in table.columns[:8]:
        col.no_wrap = True
    for lab in labels:
        table.add_row(
            f"{lab.id}{'*' if lab.current else ''}",
            lab.label_type,
            lab.status.value,
            lab.proposed_by,
            lab.validated_by or "",
            str(lab.replaces_id or ""),
            str(lab.consolidated_from_id or ""),
            lab.created_at.strftime("%Y-%m-%d %H:%M"),
            _esc(lab.reasoning[:100]),
        )
    console.print(table)


# ---------------------------------------------------------------------- validate
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
        help="cascade (rules, similar words, the bundled model's label choice, then a remote "
        "agent when --model names one), or one layer: rules, baseline, choice, agent.",
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
    deps = _deps()
    done = validate_word(
        deps, request, _config(deps, model), strategy, record=record, proposed_by="cli"
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
        f"[bold {colour}]{result.verdict}[/] {result.confidence:.0f}%  {_esc(ref.word_text)!r} as {ref.suggested_label}"
        f"  ({info['strategy']}{' → ' + info['decided_by'] if info['decided_by'] else ''}"
        f"{': ' + info['model'] if info['model'] else ''}, {info['seconds'] or 0:.1f}s)",
        highlight=False,
    )
    console.print(f"reasoning: {_esc(result.reasoning)}", highlight=False)
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
                f"  - {c['tool']}({args}) -> {_esc(c['output'][:90])}…",
                highlight=False,
                soft_wrap=True,
            )
    else:
        console.print(
            f"tool calls: {', '.join(result.run.tool_names if result.run else []) or 'none'}"
        )
    if result.unavailable:
        console.print(f"[yellow]unavailable sources:[/] {', '.join(result.unavailable)}")


# ---------------------------------------------------------------------- review
@review_app.callback()
def review(
    ctx: typer.Context,
    merchant: str | None = typer.Option(None, help="Only this merchant."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the NEEDS_REVIEW queue (then `review accept ID` or `review reject ID`)."""
    if ctx.invoked_subcommand is not None:
        return
    from casework.apps.receipts.service import review_entries

    queue = review_entries(_deps(with_vectors=False), merchant=merchant)
    if as_json:
        print_json([e.label.model_dump(mode="json") | {"receipt": e.receipt} for e in queue])
        return
    if not queue:
        console.print("The review queue is empty.")
        return
    table = Table(
        "id", "receipt", "line", "word", "text", "label", "instead of", "confidence", "reasoning"
    )
    for entry in queue:
        lab, instead = entry.label, entry.instead_of or ""
        table.add_row(
            str(lab.id),
            entry.receipt,
            str(lab.line_id),
            str(lab.word_id),
            _esc(lab.word_text),
            lab.label_type,
            instead,
            f"{lab.confidence:.0f}" if lab.confidence is not None else "",
            _esc(lab.reasoning[:90]),
        )
    console.print(table)


def _decide(label_id: int, accept: bool, reviewer: str, note: str, as_json: bool) -> None:
    from casework.apps.receipts.service import review_decide

    rows = review_decide(_deps(), label_id, accept=accept, reviewer=reviewer, note=note)
    if as_json:
        print_json([lab.model_dump(mode="json") for lab in rows])
        return
    for lab in rows:
        console.print(
            f"label {lab.id}: {lab.label_type} {lab.status.value} (replaces {lab.replaces_id or '-'}) by {lab.validated_by}"
        )


@review_app.command()
def accept(
    label_id: int = typer.Argument(..., help="Label id from `receipts review`."),
    reviewer: str = typer.Option("reviewer", help="Who decided (written to the audit trail)."),
    note: str = typer.Option("", help="Why."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Accept a label under review: it becomes VALID (and the label it replaces INVALID)."""
    _decide(label_id, True, reviewer, note, as_json)


@review_app.command()
def reject(
    label_id: int = typer.Argument(..., help="Label id from `receipts review`."),
    reviewer: str = typer.Option("reviewer", help="Who decided (written to the audit trail)."),
    note: str = typer.Option("", help="Why."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Reject a label under review: it becomes INVALID; the label it would replace stays."""
    _decide(label_id, False, reviewer, note, as_json)


# ---------------------------------------------------------------------- edge cases
@edge_app.command("list")
def edge_list(
    label: str | None = typer.Option(None, help="Only this label type."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List active known invalid patterns."""
    from casework.apps.receipts.service import edge_cases

    cases = edge_cases(_deps(with_vectors=False), label)
    if as_json:
        print_json([c.model_dump() for c in cases])
        return
    table = Table("id", "label", "pattern", "merchant", "reason")
    for c in cases:
        table.add_row(str(c.id), c.label_type, _esc(c.pattern), c.merchant_name or "any", c.reason)
    console.print(table)


@edge_app.command("add")
def edge_add(
    label: str = typer.Argument(..., help="Label type the pattern can't carry."),
    pattern: str = typer.Argument(
        ..., help="Regular expression matched against the whole word (case-insensitive)."
    ),
    reason: str = typer.Argument(..., help="Why: shown to the agent and in reviews."),
    merchant: str | None = typer.Option(None, help="Only for this merchant."),
) -> None:
    """Add a known invalid pattern."""
    from casework.apps.receipts.service import add_edge_case

    case = add_edge_case(_deps(with_vectors=False), label, pattern, reason, merchant=merchant)
    console.print(f"edge case {case.id} added: {case.label_type} / {_esc(case.pattern)}")


@edge_app.command("remove")
def edge_remove(edge_case_id: int = typer.Argument(..., help="Id from `edge-cases list`.")) -> None:
    """Switch a known invalid pattern off (kept for the record)."""
    from casework.apps.receipts.service import remove_edge_case

    case = remove_edge_case(_deps(with_vectors=False), edge_case_id)
    console.print(f"edge case {case.id} removed ({case.label_type} / {_esc(case.pattern)})")


# ---------------------------------------------------------------------- harmonise
@app.command()
def harmonize(
    merchant: str | None = typer.Option(None, help="Only this merchant's labels (default: all)."),
    strategy: str = typer.Option(
        "baseline", help="Validator for the suggestions: baseline, rules or agent."
    ),
    model: str | None = typer.Option(None, help="provider:name for the agent."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan the fixes without writing them."),
    concurrency: ConcurrencyOption = 2,
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    limit: int | None = typer.Option(None, min=1, help="Validate at most this many outliers."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Find outlier labels, validate a replacement for each, apply fixes by confidence.

    The validations go through the batch seam: --executor ray runs them on a Ray cluster
    (--address), where each worker opens the stores and the model itself.
    """
    from casework.apps.receipts.service import STRATEGIES, check_merchant
    from casework.apps.receipts.service import harmonize as run_harmonize
    from casework.runtime.batch import BatchConfig, check_batch_config

    strategy_named(STRATEGIES, strategy)  # refused before the stores open
    check_batch_config(BatchConfig(executor=executor, address=address, concurrency=concurrency))
    deps = _deps()
    check_merchant(deps, merchant)  # refused before the progress bar shows
    bar = progress(
        TextColumn("[bold]harmonising[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        enabled=not as_json,
    )
    with bar:
        task = bar.add_task("validate", total=None)
        report = run_harmonize(
            deps,
            strategy,
            merchant=merchant,
            dry_run=dry_run,
            concurrency=concurrency,
            executor=executor,
            address=address,
            config=_config(deps, model),
            limit=limit,
            on_found=lambda n: bar.update(task, total=n),
            on_done=lambda o, r: bar.advance(task),
        )
    if as_json:
        print_json(report.to_dict())
        return
    _print_harmonize(report)


def _print_harmonize(report: Any) -> None:
    data = report.to_dict()
    table = Table(
        "receipt",
        "line",
        "word",
        "text",
        "label",
        "suggestion",
        "decision",
        "conf",
        "outcome",
        title="outliers",
    )
    for f in data["fixes"][:40]:
        table.add_row(
            f["receipt"],
            str(f["line_id"]),
            str(f["word_id"]),
            _esc(f["word"]),
            f["label"],
            f["suggestion"] or "-",
            f["decision"] or "error",
            f"{f['confidence']:.0f}" if f["confidence"] is not None else "",
            f["outcome"],
        )
    if data["fixes"]:
        console.print(table)
    if len(data["fixes"]) > 40:
        console.print(f"... and {len(data['fixes']) - 40} more (--json for all)")
    summary = Table(
        "", "count", title="summary" + (" (dry run: nothing written)" if report.dry_run else "")
    )
    summary.add_row("labels scanned", str(data["labels_scanned"]))
    summary.add_row("outliers", str(data["outliers"]))
    for outcome, n in data["outcomes"].items():
        summary.add_row(outcome, str(n))
    summary.add_row("cache hits / misses", f"{data['cache']['hits']} / {data['cache']['misses']}")
    summary.add_row("seconds", f"{data['seconds']:.1f}")
    console.print(summary)
    if report.vector_error:
        console.print(
            f"[yellow]warning:[/] similar words unavailable ({report.vector_error}); only edge cases found outliers."
        )
