"""Datasets: the app's JSONL cases and the standard benchmark format (Spider / BIRD).

A Spider or BIRD file is a JSON list of entries with ``question``, the gold SQL as ``query``
(Spider) or ``SQL`` (BIRD), and ``db_id``; the database of each entry is the SQLite file
``DIR/<db_id>/<db_id>.sqlite``. Entries become cases in the harness's JSONL shape
(``{"id", "inputs", "expected", "metadata"}``); the schema of each database is reflected from
the file. ``gold_and_predicted`` runs gold and predicted SQL on the same database, read-only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from casework.apps.sql.database import execute_read_only
from casework.apps.sql.models import ExecutionResult
from casework.errors import CaseworkError, InputError

if TYPE_CHECKING:
    from casework.apps.sql.deps import SQLDeps

__all__ = [
    "DATA_DIR",
    "benchmark_case",
    "gold_and_predicted",
    "gold_tables",
    "read_benchmark",
    "spider_line",
]

DATA_DIR = Path(__file__).parent / "data"
_ORDERED = re.compile(r"\border\s+by\b", re.IGNORECASE)


def gold_tables(sql: str) -> list[str]:
    """The tables a gold query reads (for table recall), in SQLite's dialect as benchmarks
    write it; none when it does not parse."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.ParseError:
        return []
    return sorted({t.name.lower() for t in tree.find_all(exp.Table) if t.name})


def read_benchmark(path: Path, db_dir: Path) -> list[dict[str, Any]]:
    """Spider/BIRD entries (a JSON list, or one entry a line) as cases; every ``db_id`` must
    have its SQLite file."""
    cases = []
    for i, (where, entry) in enumerate(_entries(path)):
        try:
            cases.append(benchmark_case(entry, db_dir, str(i)))
        except ValueError as exc:
            raise InputError(f"{path} {where}: {exc}.") from None
    return cases


def _entries(path: Path) -> list[tuple[str, Any]]:
    """(where, entry) of every entry of a JSON list, or of JSON Lines (``line N``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"Dataset {path} does not exist.") from None
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise InputError(
                f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})."
            ) from None
        return _lines(path, text)
    if not isinstance(entries, list):
        raise InputError(f"{path} must be a JSON list of Spider/BIRD entries.")
    return [(f"entry {i}", entry) for i, entry in enumerate(entries)]


def _lines(path: Path, text: str) -> list[tuple[str, Any]]:
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path} line {number} is not valid JSON ({exc.msg} at column {exc.colno})."
            ) from None
    return entries


def benchmark_case(entry: Any, db_dir: Path, default_id: str) -> dict[str, Any]:
    """One Spider/BIRD entry as a case on ``db_dir/<db_id>/<db_id>.sqlite``; ``ValueError``
    saying what is missing."""
    gold = entry.get("query") or entry.get("SQL") if isinstance(entry, dict) else None
    if not gold or not entry.get("question") or not entry.get("db_id"):
        raise ValueError("needs question, query (or SQL) and db_id")
    db_path = db_dir / entry["db_id"] / f"{entry['db_id']}.sqlite"
    if not db_path.is_file():
        raise ValueError(f"No database for db_id {entry['db_id']!r}: expected {db_path}")
    if not _is_sqlite(db_path):
        raise ValueError(f"{db_path} (db_id {entry['db_id']!r}) is not a SQLite database")
    question = entry["question"]
    if entry.get("evidence"):
        question = f"{question} (Hint: {entry['evidence']})"
    return {
        "id": str(entry.get("question_id", default_id)),
        # the database an example learned from this case was verified on (``example_schema``)
        "inputs": {"question": question, "db_id": entry["db_id"]},
        "expected": {
            "verdict": "ANSWERED",
            "sql": gold,
            "ordered": bool(_ORDERED.search(gold)),
            "tables": gold_tables(gold),
        },
        "metadata": {
            "db_id": entry["db_id"],
            "db_url": f"sqlite:///{db_path.resolve().as_posix()}",
            "difficulty": entry.get("difficulty") or entry.get("hardness") or "",
        },
    }


def _is_sqlite(path: Path) -> bool:
    """Whether the file starts as every SQLite database does."""
    with path.open("rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def spider_line(record: dict[str, Any], path: Path) -> dict[str, Any]:
    """A JSONL dataset's line (``EvalSuite.read_case``): a case as it is, or a Spider/BIRD
    entry (``db_id``, ``question``, ``query``) on Spider's layout, its database at
    ``<the dataset's folder>/database/<db_id>/<db_id>.sqlite``; its id is the entry's
    ``question_id``, else its database and question's digest."""
    if "inputs" in record or "db_id" not in record:
        return record
    digest = hashlib.sha256(f"{record['db_id']}\n{record.get('question')}".encode()).hexdigest()
    return benchmark_case(record, path.parent / "database", f"{record['db_id']}-{digest[:8]}")


def gold_and_predicted(
    deps: SQLDeps,
    gold_sql: str,
    predicted_sql: str | None,
    *,
    execute: Callable[[SQLDeps, str], ExecutionResult],
) -> dict[str, Any]:
    """Both result sets on ``deps.db_url`` (read-only); predictions go through ``execute``
    (the service's ``execute_validated``: validated first). Gold SQL is trusted data: run
    like a prediction, or, when the validator does not take it (benchmarks ship SQLite SQL),
    as written on the read-only connection."""
    out: dict[str, Any] = {"gold_result": None, "result": None, "error": None}
    try:
        try:
            gold = execute(deps, gold_sql)
        except InputError:
            gold = execute_read_only(deps.db_url or "", gold_sql, max_rows=deps.config.max_rows)
        out["gold_result"] = gold.model_dump(mode="json")
    except CaseworkError as exc:
        out["error"] = f"gold: {exc}"
        return out
    if predicted_sql:
        try:
            out["result"] = execute(deps, predicted_sql).model_dump(mode="json")
        except CaseworkError as exc:
            out["error"] = f"predicted: {exc}"
    return out
