"""``python -m casework.apps.sql.data.memory_sweep DEV.json --db-dir DIR`` measures the memory
layer's threshold on Spider/BIRD-format questions: per database, the first half of its
questions (in the file's order) is stored as verified examples in a temporary store, and each
question of the second half is answered by the ``memory`` strategy alone (no model). A
remembered answer is right when its rows equal the gold query's (execution accuracy). The table
says, per threshold on the memory's confidence, how many questions it would answer and how many
of those rightly; ``--split alternate`` stores every other question instead (Spider writes each
query's questions in adjacent pairs: the other half then holds their paraphrases).

``--demonstrations K --limit N`` measures the model layer instead: the first N measured
questions answered by the ``consistency`` strategy (the bundled model) with the K nearest
verified questions of their database in its prompt; run it under
``flock /tmp/casework-model.lock`` on a shared machine."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from casework.apps.sql.benchmark import gold_and_predicted, read_benchmark
from casework.apps.sql.deps import build_deps
from casework.apps.sql.examples import SchemaMemory
from casework.apps.sql.metrics import execution_match
from casework.apps.sql.service import answer, execute_validated
from casework.config import Settings
from casework.errors import CaseworkError
from casework.examples import memory_for
from casework.runtime import RunConfig
from casework.runtime.memory import ExampleDraft
from casework.runtime.memory_layer import demonstrations, threshold_report, threshold_table
from casework.stores import open_stores

__all__ = ["THRESHOLDS", "demonstration_reach", "main", "split_cases", "sweep", "with_model"]

THRESHOLDS = (50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 99.0)


def split_cases(
    cases: list[dict[str, Any]], how: str = "half"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(examples, measured): per database, the first half and the second (``half``), or the
    even and the odd positions (``alternate``), in the file's order."""
    by_db: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in cases:
        by_db[case["metadata"]["db_id"]].append(case)
    stored, measured = [], []
    for group in by_db.values():
        if how == "alternate":
            stored += group[0::2]
            measured += group[1::2]
        else:
            stored += group[: len(group) // 2]
            measured += group[len(group) // 2 :]
    return stored, measured


def _store(settings: Settings, stored: list[dict[str, Any]]) -> None:
    drafts = [
        (
            c["inputs"]["question"],
            ExampleDraft(
                {"question": c["inputs"]["question"], "schema": c["metadata"]["db_id"]},
                {"sql": c["expected"]["sql"]},
            ),
        )
        for c in stored
    ]
    memory_for(settings, "sql", None).add_many(drafts, verified_by="sweep", source="import")


def _right(deps: Any, case: dict[str, Any], query: str | None) -> bool:
    """The query's rows are the gold query's (execution accuracy)."""
    if not query:
        return False
    try:
        out = gold_and_predicted(deps, case["expected"]["sql"], query, execute=execute_validated)
    except CaseworkError:
        return False
    return execution_match(case["expected"], out) is True


def sweep(cases: list[dict[str, Any]], home: Path, how: str = "half") -> list[dict[str, Any]]:
    """One row per measured question: its memory confidence (0: not answered), whether the
    remembered query's rows were the gold query's, and the memory's explanation."""
    settings = Settings(home=home)
    stored, measured = split_cases(cases, how)
    _store(settings, stored)
    base = build_deps(settings)
    config = RunConfig.of(settings)
    rows = []
    for case in measured:
        deps = base.on_database(case["metadata"]["db_url"])
        response = answer(deps, case["inputs"]["question"], config, "memory")
        answered = bool(response.query and response.valid)
        right = answered and _right(deps, case, response.query)
        rows.append(
            {
                "db_id": case["metadata"]["db_id"],
                "question": case["inputs"]["question"],
                "confidence": round(100 * response.confidence, 2) if answered else 0.0,
                "right": right,
                "explanation": response.explanation,
            }
        )
    return rows


def demonstration_reach(
    cases: list[dict[str, Any]], home: Path, k: int, how: str = "half"
) -> list[dict[str, Any]]:
    """Per measured question, whether one of the ``k`` demonstrations the model would be
    shown already holds a query with the gold rows (no model: what the examples could give)."""
    settings = Settings(home=home)
    stored, measured = split_cases(cases, how)
    _store(settings, stored)
    base = build_deps(settings)
    rows = []
    for case in measured:
        deps = base.on_database(case["metadata"]["db_url"])
        memory = SchemaMemory(open_stores(settings).engine, None, deps.schema.name)
        shown = demonstrations(memory, case["inputs"]["question"], k)
        rows.append(
            {
                "question": case["inputs"]["question"],
                "reach": any(_right(deps, case, str(d.answer.get("sql"))) for d in shown),
            }
        )
    return rows


def with_model(
    cases: list[dict[str, Any]], home: Path, k: int, limit: int, how: str = "half"
) -> list[dict[str, Any]]:
    """The first ``limit`` measured questions answered by the bundled model's
    self-consistency, shown ``k`` verified questions of the database: one row each."""
    settings = Settings(home=home)
    stored, measured = split_cases(cases, how)
    _store(settings, stored)
    base = build_deps(settings).with_config(demonstrations=k, retrieval_type="keyword")
    config = RunConfig.of(settings)
    rows = []
    for case in measured[:limit]:
        deps = base.on_database(case["metadata"]["db_url"])
        response = answer(deps, case["inputs"]["question"], config, "consistency")
        rows.append(
            {
                "question": case["inputs"]["question"],
                "query": response.query,
                "right": _right(deps, case, response.query),
                "model_calls": response.model_calls,
                "input_tokens": response.input_tokens,
                "seconds": response.seconds,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path, help="Spider/BIRD JSON (dev.json)")
    parser.add_argument("--db-dir", type=Path, required=True, help="DIR/<db_id>/<db_id>.sqlite")
    parser.add_argument("--split", choices=("half", "alternate"), default="half")
    parser.add_argument("--out", type=Path, help="write the per-question rows here (JSONL)")
    parser.add_argument("--demonstrations", type=int, metavar="K", help="measure the model")
    parser.add_argument("--limit", type=int, default=6, help="questions for the model")
    parser.add_argument("--reach", type=int, metavar="K", help="demonstrations holding the answer")
    args = parser.parse_args(argv)
    try:
        cases = read_benchmark(args.dataset, args.db_dir)
        with tempfile.TemporaryDirectory(prefix="casework-sql-memory-") as home:
            if args.reach is not None:
                rows = demonstration_reach(cases, Path(home), args.reach, args.split)
            elif args.demonstrations is not None:
                rows = with_model(cases, Path(home), args.demonstrations, args.limit, args.split)
            else:
                rows = sweep(cases, Path(home), args.split)
    except CaseworkError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.reach is not None:
        reach = sum(r["reach"] for r in rows)
        print(f"k={args.reach}: a shown example holds the gold rows for {reach}/{len(rows)}")
        return 0
    if args.demonstrations is not None:
        right = sum(r["right"] for r in rows)
        calls = sum(r["model_calls"] for r in rows)
        tokens = sum(r["input_tokens"] for r in rows)
        seconds = sum(r["seconds"] for r in rows)
        print(
            f"k={args.demonstrations}: execution accuracy {right}/{len(rows)}, "
            f"{calls} model calls, {tokens} prompt tokens, {seconds:.0f} s"
        )
        return 0
    table = threshold_table([(r["confidence"], r["right"]) for r in rows], THRESHOLDS)
    print(f"{len(rows)} questions measured ({args.split} split)")
    print(threshold_report(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
