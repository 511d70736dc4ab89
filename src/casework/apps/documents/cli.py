"""``casework documents …``: add files, extract, correct, watch runs, stacks, demo.

Thin: every command resolves the user (the platform's users: `casework user add NAME`, or
`casework documents user add NAME`, the same command), calls the repository or ``service`` and
prints. Errors a user can cause raise CaseworkError; the root CLI prints them as one sentence
with a non-zero exit. The evaluation is `casework eval documents` (the platform's harness).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from casework.clikit import (
    AddressOption,
    ConcurrencyOption,
    ExecutorOption,
    caller_named,
    mount_user_add,
    progress,
)
from casework.errors import InputError

__all__ = ["app"]

console = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True, soft_wrap=True)
app = typer.Typer(
    help="Extract fields from PDFs and images with an agent whose tools write the database. "
    "Start with `casework user add ana`, then `casework documents add invoice.pdf "
    "--user ana` and `casework documents extract 1 --user ana`.",
    no_args_is_help=True,
)
user_app = typer.Typer(
    help="Users (the platform's: the same users as `casework user`).", no_args_is_help=True
)
mount_user_add(user_app)
app.add_typer(user_app, name="user")
stack_app = typer.Typer(
    help="Stacks: many documents into one table, one row each.", no_args_is_help=True
)
app.add_typer(stack_app, name="stack")

USER = typer.Option(..., "--user", "-u", help="Whose documents (a `casework user` name).")
JSON = typer.Option(False, "--json", help="Print one JSON document on stdout.")
MODEL = typer.Option(None, "--model", help="provider:name; default: the specialist model setting.")


def _deps() -> Any:
    from casework.apps.documents.service import build_deps

    return build_deps()


def _caller(deps: Any, user: str) -> Any:
    return caller_named(user, deps.settings)


def _config(deps: Any, model: str | None) -> Any:
    """The run config of a command: ``--model`` for every role (None: the settings'); a bad
    spec fails here, in one sentence, not as a failed run later."""
    from casework.apps.documents.models import ROLES
    from casework.runtime.runconfig import RunConfig

    config = RunConfig.of(deps.settings, model)
    if model is not None:
        config.models(ROLES["agent"])
    return config


def _json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


@app.command("add")
def add(
    files: list[Path] = typer.Argument(..., help="PDF, PNG or JPEG files."),
    user: str = USER,
    concurrency: ConcurrencyOption = 2,
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    as_json: bool = JSON,
) -> None:
    """Read files (text layer, or OCR for scans and images) and store each one whole; a file
    that cannot be read is one error line and the others are still added (exit 2 then)."""
    from casework.apps.documents.service import add_files
    from casework.runtime.batch import BatchConfig, check_batch_config

    batch = BatchConfig(executor=executor, address=address, concurrency=concurrency)
    check_batch_config(batch)  # before anything is read or written
    deps = _deps()
    caller = _caller(deps, user)
    with progress() as bar:
        overall = bar.add_task(f"adding {len(files)} files", total=len(files))
        pages: dict[str, Any] = {}

        def file_done(_: Any) -> None:
            bar.advance(overall)

        def page_done(name: str, done: int, total: int) -> None:
            if name not in pages:
                pages[name] = bar.add_task(f"reading {name}", total=total)
            bar.update(pages[name], completed=done, visible=done < total)

        batch.progress = file_done
        added = add_files(deps, caller.user_id, list(files), batch=batch, progress=page_done)
    failed = [a for a in added if a.error is not None]
    for a in failed:
        err.print(f"[red]error:[/] {escape(a.error or '')}", highlight=False)
    docs = [a.document for a in added if a.document is not None]
    if as_json:
        _json(
            {
                "documents": [d.to_dict() for d in docs],
                "errors": [{"file": str(a.path), "error": a.error} for a in failed],
            }
        )
    else:
        for d in docs:
            per_page = (
                f", OCR {d.read_seconds / max(d.ocr_pages, 1):.1f}s/page" if d.ocr_pages else ""
            )
            console.print(
                f"added document {d.id}: {d.filename} ({d.page_count} pages, {d.engine}{per_page})",
                highlight=False,
            )
    if failed:
        raise typer.Exit(max(a.exit_code for a in failed))


@app.command("ocr")
def ocr_cmd(
    file: Path = typer.Argument(..., help="A PDF, PNG or JPEG file."),
    engine: str | None = typer.Option(
        None,
        "--engine",
        help="rapidocr-v6-spaced, rapidocr-v6, rapidocr-spaced, rapidocr, tesseract or "
        "rapidocr-spaced+tesseract-lines; default: CASEWORK_DOCUMENTS__OCR_ENGINE "
        "(rapidocr-v6-spaced).",
    ),
    fresh: bool = typer.Option(
        False, "--fresh", help="OCR every page again rather than take it from the OCR cache."
    ),
    as_json: bool = JSON,
) -> None:
    """Print the text a file yields, page by page, as the extraction sees it (a PDF's text
    layer, OCR for scanned pages and images); no document is stored, only the OCR cache's
    copy of each page's text (``.casework/ocr-cache``; off with
    CASEWORK_DOCUMENTS__OCR_CACHE=false)."""
    from casework.apps.documents.service import read_file

    read = read_file(file, engine=engine, cached=not fresh)
    if as_json:
        _json(
            {
                "file": str(file),
                "media_type": read.media_type,
                "engine": read.engine,
                "pages": [
                    {"text": p.text, "ocr": p.ocr, "seconds": round(p.seconds, 3)}
                    for p in read.pages
                ],
            }
        )
        return
    for number, page in enumerate(read.pages, 1):
        if len(read.pages) > 1:
            sys.stdout.write(f"--- page {number}\n")
        sys.stdout.write(page.text + "\n")
    how = ", ".join(
        f"page {n}: {'OCR' if p.ocr else 'text layer'} {p.seconds:.1f}s"
        for n, p in enumerate(read.pages, 1)
    )
    err.print(f"{file.name}: {read.engine} ({how})", highlight=False)


@app.command("list")
def list_cmd(user: str = USER, as_json: bool = JSON) -> None:
    """Your documents."""
    deps = _deps()
    docs = deps.repo.list_documents(_caller(deps, user).user_id)
    if as_json:
        _json([d.to_dict() for d in docs])
        return
    table = Table("id", "file", "type", "pages", "engine", "added")
    for d in docs:
        table.add_row(
            str(d.id),
            d.filename,
            d.media_type,
            str(d.page_count),
            d.engine,
            f"{d.created_at:%Y-%m-%d %H:%M}",
        )
    console.print(table)


@app.command()
def show(document: int, user: str = USER, as_json: bool = JSON) -> None:
    """A document and its extractions."""
    deps = _deps()
    uid = _caller(deps, user).user_id
    doc = deps.repo.get_document(uid, document)
    exts = deps.repo.extractions_of(uid, document)
    if as_json:
        _json(doc.to_dict() | {"extractions": [e.to_dict() for e in exts]})
        return
    console.print(
        f"[bold]{doc.filename}[/] (document {doc.id}, {doc.page_count} pages, {doc.engine})"
    )
    for e in exts:
        _print_extraction(e)


def _print_extraction(e: Any) -> None:
    console.print(
        f"extraction {e.id}: [bold]{e.status}[/] ({e.mode}, {e.method}"
        + (f", {e.document_type}" if e.document_type else "")
        + ")"
        + (f" - {e.reason}" if e.reason else ""),
        highlight=False,
    )
    for name, value in e.fields.items():
        conf = e.confidence_scores.get(name)
        conf_s = f"{conf:.2f}" if isinstance(conf, int | float) else "-"
        console.print(
            f"  {name}: {json.dumps(value, ensure_ascii=False)}  [dim]({conf_s})[/]",
            highlight=False,
        )


def _follow(
    deps: Any, user_id: int, run_id: str, *, after: int = 0, quiet: bool = False
) -> dict[str, Any]:
    from casework.apps.documents.service import follow_run

    last: dict[str, Any] = {}
    for seq, data in follow_run(deps, user_id, run_id, after=after):
        last = data
        if quiet:
            continue
        if "text" in data:
            err.print(f"[dim]{seq:>3}[/] {data['text'][:300]}", highlight=False)
        elif "tool" in data:
            err.print(
                f"[dim]{seq:>3}[/] → {data['tool']} {json.dumps(data['input'], ensure_ascii=False)[:200]}",
                highlight=False,
            )
        elif data.get("complete"):
            err.print(f"[dim]{seq:>3}[/] complete {json.dumps(data, default=str)}", highlight=False)
    return last


@app.command()
def extract(
    document: int,
    user: str = USER,
    fields: str | None = typer.Option(
        None,
        "--fields",
        help="Custom mode: comma-separated names, e.g. company,date,address,total.",
    ),
    strategy: str = typer.Option(
        "cascade",
        help="cascade (the rules, then the bundled model's field layer, then a remote agent "
        "when --model names one), or one strategy: rules, fields, agent.",
    ),
    model: str | None = MODEL,
    as_json: bool = JSON,
) -> None:
    """Run an extraction on a document; its events stream to stderr (re-attach with `watch`)."""
    from casework.apps.documents.service import start_extraction

    names = [f.strip() for f in fields.split(",") if f.strip()] if fields is not None else None
    if fields is not None and not names:
        raise InputError("--fields names no field; give e.g. --fields company,date,total.")
    deps = _deps()
    caller = _caller(deps, user)
    handle = start_extraction(
        deps, caller, document, fields=names, strategy=strategy, config=_config(deps, model)
    )
    err.print(f"run {handle.run_id}, extraction {handle.extraction_id}", highlight=False)
    _follow(deps, caller.user_id, handle.run_id, quiet=as_json)
    assert handle.extraction_id is not None  # an extraction run always has its row
    _finish(deps, caller.user_id, handle.extraction_id, as_json)


def _finish(deps: Any, user_id: int, extraction_id: int, as_json: bool) -> None:
    ext = deps.repo.get_extraction(user_id, extraction_id)
    if as_json:
        _json(ext.to_dict())
    else:
        _print_extraction(ext)
    if ext.status != "completed":
        raise typer.Exit(1)


@app.command()
def correct(
    extraction: int,
    instruction: str,
    user: str = USER,
    model: str | None = MODEL,
    as_json: bool = JSON,
) -> None:
    """Correct an extraction in words: `documents correct 3 "the total is 45.10"`."""
    from casework.apps.documents.service import start_correction

    deps = _deps()
    caller = _caller(deps, user)
    handle = start_correction(deps, caller, extraction, instruction, config=_config(deps, model))
    err.print(f"run {handle.run_id}, extraction {extraction}", highlight=False)
    _follow(deps, caller.user_id, handle.run_id, quiet=as_json)
    _finish(deps, caller.user_id, extraction, as_json)


@app.command()
def watch(
    run: str,
    user: str = USER,
    after: int = typer.Option(0, "--after", help="Skip events up to this id."),
) -> None:
    """Follow a run's events (from the start, or after an event id) until it completes."""
    deps = _deps()
    uid = _caller(deps, user).user_id
    deps.repo.get_run(uid, run)
    _follow(deps, uid, run, after=after)


# ---------------------------------------------------------------------- stacks
@stack_app.command("create")
def stack_create(name: str, user: str = USER) -> None:
    """Create an empty stack."""
    from casework.apps.documents.service import create_stack

    deps = _deps()
    stack = create_stack(deps, _caller(deps, user).user_id, name)
    console.print(f"created stack {stack.id}: {stack.name}", highlight=False)


@stack_app.command("add")
def stack_add(stack: int, documents: list[int], user: str = USER) -> None:
    """Add documents to a stack (all or none)."""
    from casework.apps.documents.service import add_to_stack

    deps = _deps()
    info = add_to_stack(deps, _caller(deps, user).user_id, stack, documents)
    console.print(f"stack {info.id} has {len(info.document_ids)} documents", highlight=False)


@stack_app.command("build")
def stack_build(
    stack: int,
    user: str = USER,
    model: str | None = MODEL,
    concurrency: ConcurrencyOption = 1,
    executor: ExecutorOption = "local",
    address: AddressOption = None,
) -> None:
    """Build (or resume) the stack's table with the stacks agent. A stack with more than a few
    documents left is batched: columns first, then one run per row through run_batch
    (--concurrency rows at once, locally or on a Ray cluster)."""
    from casework.apps.documents.service import start_stack_build
    from casework.runtime.batch import BatchConfig, check_batch_config

    batch = BatchConfig(executor=executor, address=address, concurrency=concurrency)
    check_batch_config(batch)
    deps = _deps()
    caller = _caller(deps, user)
    config = _config(deps, model)
    handle = start_stack_build(deps, caller, stack, config=config, batch=batch)
    err.print(f"run {handle.run_id}, stack {stack}", highlight=False)
    last = _follow(deps, caller.user_id, handle.run_id)
    if last.get("error"):
        raise InputError(last["error"])
    _print_stack(deps, caller.user_id, stack)


def _print_stack(deps: Any, user_id: int, stack: int) -> None:
    info = deps.repo.get_stack(user_id, stack)
    console.print(f"[bold]{info.name}[/] (stack {info.id}, {len(info.document_ids)} documents)")
    if info.table is None:
        console.print("  no table yet: `casework documents stack build`")
        return
    names = [c["name"] for c in info.table.columns]
    table = Table("doc", "file", *names, title=f"table: {info.table.status}")
    for row in info.table.rows:
        table.add_row(
            str(row["document_id"]),
            row["filename"],
            *(json.dumps(row["cells"].get(n), ensure_ascii=False) for n in names),
        )
    console.print(table)


@stack_app.command("show")
def stack_show(stack: int, user: str = USER, as_json: bool = JSON) -> None:
    """A stack, its documents and its table."""
    deps = _deps()
    uid = _caller(deps, user).user_id
    if as_json:
        _json(deps.repo.get_stack(uid, stack).to_dict())
        return
    _print_stack(deps, uid, stack)


@stack_app.command("export")
def stack_export(
    stack: int,
    user: str = USER,
    csv_out: bool = typer.Option(False, "--csv", help="CSV on stdout (the only format so far)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write to this file instead."),
) -> None:
    """Export the stack's table as CSV, one row per document."""
    from casework.apps.documents.service import stack_csv

    if not csv_out:
        raise InputError("Choose a format: --csv.")
    deps = _deps()
    text, rows = stack_csv(deps, _caller(deps, user).user_id, stack)
    if output:
        output.write_text(text, encoding="utf-8")
        err.print(f"wrote {rows} rows to {output}")
    else:
        sys.stdout.write(text)


@app.command()
def demo(model: str | None = MODEL) -> None:
    """Add two sample documents for a demo user, extract with the rules and the agent."""
    from casework.apps.documents.demo import run_demo

    run_demo(console, model=model)
