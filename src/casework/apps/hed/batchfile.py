"""A batch's files: the CSV of descriptions it reads, its key (which rows a re-run skips), and
the JSON lines of every row's result it writes, whole, in the file's order."""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casework.errors import InputError


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


def write_results(
    out: Path, rows: list[tuple[str, str]], results: dict[str, dict[str, Any]], report: BatchReport
) -> None:
    """Every row's result in the file's order, written whole and then renamed: never half a
    file, also when the batch was interrupted."""
    for rid, _ in rows:
        verdict = results.get(rid, {}).get("verdict")
        if verdict and "error" not in results[rid]:
            report.verdicts[verdict] = report.verdicts.get(verdict, 0) + 1
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for rid, _ in rows:
            fh.write(json.dumps({"id": rid, **results.get(rid, {"error": "not run"})}) + "\n")
    tmp.replace(out)
