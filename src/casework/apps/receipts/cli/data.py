"""Receipts in and out: ``import``, ``seed``, ``index``, ``list``, ``show``, ``history``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from casework.apps.receipts.cli.common import console, esc, open_deps
from casework.apps.receipts.models import ValidationStatus
from casework.clikit import print_json
from casework.errors import InputError

__all__ = ["app"]

app = typer.Typer()


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

    deps = open_deps(with_vectors=not no_index)
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

    report = seed_fn(open_deps(with_vectors=not no_index), index=not no_index)
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

    n = index_words(open_deps(), everything=everything)
    print_json({"indexed_words": n}) if as_json else console.print(f"{n} words embedded.")


@app.command("list")
def list_cmd(
    merchant: str | None = typer.Option(None, help="Only this merchant."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List imported receipts with their slugs (use a slug wherever RECEIPT is asked)."""
    receipts = open_deps(with_vectors=False).repo.list_receipts(merchant=merchant)
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

    view = show_receipt(open_deps(with_vectors=False), receipt)
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
        by_line.setdefault(w.line_id, []).append(f"[dim]{w.word_id}:[/]{esc(w.text)}{tag}")
    for line_id, parts in by_line.items():
        console.print(f"L{line_id:<3} " + "  ".join(parts), highlight=False)


@app.command()
def history(
    receipt: str = typer.Argument(..., help="Receipt slug or key."),
    line: int = typer.Argument(..., help="Line id (see `receipts show`)."),
    word: int = typer.Argument(..., help="Word id within the line."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The audit trail of one word: every label row, who proposed and validated it, and what replaced what."""
    from casework.apps.receipts.service import word_history

    found = word_history(open_deps(with_vectors=False), receipt, line, word)
    r, w, labels = found.receipt, found.word, found.labels
    if as_json:
        print_json([lab.model_dump(mode="json") for lab in labels])
        return
    console.print(f"{r.slug} line {line} word {word}: {esc(w.text)!r}  (* = current)")
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
            esc(lab.reasoning[:100]),
        )
    console.print(table)
