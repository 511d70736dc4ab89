"""What the CLI (and later the API) call: annotate one description, or a CSV batch.

A batch is resumable: each finished row is stored with the batch's key (the file's absolute
path, strategy and schema) and its row id, and a re-run skips those rows. A row that fails
(bad description, model error) is reported in the output and retried on the next run.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casework.apps.hed.deps import HedDeps
from casework.apps.hed.models import HedDecision, HedInput
from casework.apps.hed.repository import decision_json
from casework.apps.hed.strategies import STRATEGIES, ProgressHook
from casework.errors import CaseworkError, InputError
from casework.runtime import EndReason

__all__ = ["BatchReport", "annotate", "batch_key", "read_batch", "run_batch", "strategy_named"]


def strategy_named(name: str) -> Callable[..., HedDecision]:
    if name not in STRATEGIES:
        raise InputError(f"Unknown strategy {name!r}; use one of {', '.join(STRATEGIES)}.")
    return STRATEGIES[name]


def annotate(
    input: HedInput,
    deps: HedDeps,
    *,
    strategy: str = "loop",
    on_step: ProgressHook | None = None,
    batch_key: str | None = None,
    row_id: str | None = None,
) -> HedDecision:
    """Run one strategy and store the finished run (a run cut short by a model error is not
    stored as finished, so a batch retries it)."""
    decision = strategy_named(strategy)(input, deps, on_step)
    if deps.repo is not None and decision.run and decision.run.ended_by != EndReason.ERROR_MODEL:
        deps.repo.save(decision, batch_key=batch_key, row_id=row_id)
    return decision


def read_batch(path: Path) -> list[tuple[str, str]]:
    """(row id, description) from a CSV with a ``description`` column (and optionally ``id``)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"Cannot read {path} ({exc}); pass a UTF-8 CSV file.") from None
    reader = csv.DictReader(text.splitlines())
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    if "description" not in fields:
        raise InputError(
            f"{path} has no 'description' column; the header must name one (and optionally 'id')."
        )
    rows = []
    for n, raw in enumerate(reader, start=1):
        row = {k.strip().lower(): (v or "") for k, v in raw.items() if k}
        rows.append(((row.get("id") or "").strip() or str(n), row.get("description", "")))
    ids = [r[0] for r in rows]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path} repeats row ids; give every row a unique 'id'.")
    return rows


def batch_key(path: Path, strategy: str, schema: str, assess: bool) -> str:
    ident = f"{path.resolve()}|{strategy}|{schema}|{int(assess)}"
    return hashlib.sha256(ident.encode()).hexdigest()[:24]


@dataclass
class BatchReport:
    key: str
    out: Path
    total: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch_key": self.key,
            "out": str(self.out),
            "rows": self.total,
            "skipped_already_done": self.skipped,
            "annotated": self.done,
            "failed": self.failed,
            "verdicts": self.verdicts,
        }


def run_batch(
    path: Path,
    deps: HedDeps,
    *,
    strategy: str = "loop",
    schema: str = "8.3.0",
    assess: bool = False,
    concurrency: int = 1,
    out: Path | None = None,
    on_row: Callable[[str, dict[str, Any]], None] | None = None,
) -> BatchReport:
    """Annotate every row not yet finished; write all rows' results (old and new) as JSON
    lines to ``out`` in the file's order. Rows run ``concurrency`` at a time."""
    if deps.repo is None:
        raise InputError("A batch needs the database to resume from; build deps with a repository.")
    strategy_named(strategy)
    rows = read_batch(path)
    key = batch_key(path, strategy, schema, assess)
    out = out or path.with_suffix(".hed.jsonl")
    report = BatchReport(key=key, out=out, total=len(rows))
    results: dict[str, dict[str, Any]] = dict(deps.repo.finished_rows(key))
    todo = [(rid, text) for rid, text in rows if rid not in results]
    report.skipped = len(rows) - len(todo)

    def one(rid: str, text: str) -> dict[str, Any]:
        try:
            decision = annotate(
                HedInput(description=text, schema_version=schema, run_assessment=assess),
                deps,
                strategy=strategy,
                batch_key=key,
                row_id=rid,
            )
        except CaseworkError as exc:
            return {"id": rid, "error": str(exc)}
        data = decision_json(decision)
        if decision.run and decision.run.ended_by == EndReason.ERROR_MODEL:
            data["error"] = decision.run.detail
        return data

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = {pool.submit(one, rid, text): rid for rid, text in todo}
        for future in as_completed(futures):
            rid = futures[future]
            data = future.result()
            results[rid] = data
            if "error" in data:
                report.failed += 1
            else:
                report.done += 1
            if on_row is not None:
                on_row(rid, data)
    for rid, _ in rows:
        verdict = results.get(rid, {}).get("verdict")
        if verdict and "error" not in results[rid]:
            report.verdicts[verdict] = report.verdicts.get(verdict, 0) + 1
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:  # written whole, then renamed: never half a file
        for rid, _ in rows:
            fh.write(json.dumps({"id": rid, **results.get(rid, {"error": "not run"})}) + "\n")
    tmp.replace(out)
    return report
