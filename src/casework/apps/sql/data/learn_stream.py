"""``python -m casework.apps.sql.data.learn_stream RUN/report.json`` reads a ``casework eval sql
--learn`` run (its report) per database, in stream order: each database's first and second
half of questions, which questions repeat an earlier one (the same gold query earlier in the
same database: Spider's paraphrase pairs, known from the gold, not from the memory), and how
the run did on them.

With ``--strategy memory`` runs (no model) it fits the memory threshold on the **first halves
only** (the lowest threshold right ``--target`` of the time there) and reports that threshold
and 90 on the second halves: how many questions the memory answers, how many rightly, and how
many repeats it answers rightly. For a cascade run it prints the second-half execution
accuracy of each database and the model calls.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.runtime.memory_layer import lowest_threshold, threshold_table

__all__ = ["THRESHOLDS", "StreamCase", "main", "per_database", "stream_cases"]

THRESHOLDS = (50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 92.5, 95.0, 97.5)


@dataclass(frozen=True)
class StreamCase:
    db_id: str
    second_half: bool
    repeat: bool
    """The same gold query was asked earlier in this database (a repeat or paraphrase)."""
    confidence: float
    """The memory's confidence (0-100) when the memory layer or strategy answered, else 0."""
    right: bool
    """The answer's rows are the gold query's."""
    model_calls: int
    decided_by: str | None
    seconds: float


def _normal(sql: str) -> str:
    return re.sub(r"\s+", " ", sql.strip().rstrip(";")).lower()


def _memory_confidence(case: dict[str, Any]) -> float:
    """The memory's confidence on a case: the memory strategy's own, or the memory layer's in
    a cascade (0 when it had no near example or did not answer)."""
    output = case.get("output") or {}
    if (output.get("response") or {}).get("strategy") == "memory":
        return float(output.get("confidence") or 0.0) if case["verdict"] == "ANSWERED" else 0.0
    for layer in case.get("layers") or []:
        if layer.get("layer") == "memory":
            return float(layer.get("confidence") or 0.0)
    return 0.0


def stream_cases(cases: list[dict[str, Any]]) -> list[StreamCase]:
    """The report's cases (in stream order) as ``StreamCase``: halves per database."""
    by_db: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in cases:
        by_db[case["metadata"]["db_id"]].append(case)
    out = []
    for db_id, group in by_db.items():
        seen: set[str] = set()
        for i, case in enumerate(group):
            gold = _normal(case["expected"]["sql"])
            out.append(
                StreamCase(
                    db_id=db_id,
                    second_half=i >= len(group) // 2,
                    repeat=gold in seen,
                    confidence=_memory_confidence(case),
                    right=case["domain"].get("execution_accuracy") == 1.0,
                    model_calls=int(case["domain"].get("model_calls_per_question") or 0),
                    decided_by=case.get("decided_by"),
                    seconds=float(case.get("wall_seconds") or 0.0),
                )
            )
            seen.add(gold)
    return out


def median_decided_seconds(rows: list[StreamCase]) -> float | None:
    """The median seconds of the questions some layer decided (the wait for an answer), None
    when none was decided."""
    seconds = [r.seconds for r in rows if r.decided_by]
    return round(statistics.median(seconds), 2) if seconds else None


def per_database(rows: list[StreamCase]) -> dict[str, dict[str, Any]]:
    """Per database: questions, second-half execution accuracy, model calls, and the repeats
    the memory layer decided with no model call."""
    out: dict[str, dict[str, Any]] = {}
    for db_id in dict.fromkeys(r.db_id for r in rows):
        group = [r for r in rows if r.db_id == db_id]
        second = [r for r in group if r.second_half]
        out[db_id] = {
            "questions": len(group),
            "second_half": len(second),
            "second_half_right": sum(r.right for r in second),
            "model_calls": sum(r.model_calls for r in group),
            "repeats": sum(r.repeat for r in group),
            "memory_no_model": sum(r.decided_by == "memory" and r.model_calls == 0 for r in group),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="report.json of an `eval sql --learn` run")
    parser.add_argument("--target", type=float, default=0.95, help="precision the fit needs")
    args = parser.parse_args(argv)
    try:
        cases = json.loads(args.report.read_text(encoding="utf-8"))["cases"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {args.report} is no eval report ({exc}).", file=sys.stderr)
        return 2
    rows = stream_cases(cases)
    for db_id, row in per_database(rows).items():
        print(
            f"{db_id}: {row['questions']} questions, second half {row['second_half_right']}/"
            f"{row['second_half']} right, {row['model_calls']} model calls, {row['repeats']} "
            f"repeats, {row['memory_no_model']} decided by the memory with no model call"
        )
    second = [r for r in rows if r.second_half]
    right = sum(r.right for r in second)
    print(f"second halves: {right}/{len(second)} right; repeats {sum(r.repeat for r in rows)}")
    decided = [r for r in rows if r.decided_by]
    print(
        f"decided {len(decided)}/{len(rows)}, median seconds per decided question "
        f"{median_decided_seconds(rows)}; model calls {sum(r.model_calls for r in rows)}"
    )
    halves = {}
    for name, half in (("first", False), ("second", True)):
        part = [r for r in rows if r.second_half is half]
        halves[name] = threshold_table([(r.confidence, r.right) for r in part], THRESHOLDS)
        reps = [r for r in part if r.repeat]
        print(f"{name} halves ({len(part)} questions, {len(reps)} repeats):")
        for t in halves[name]:
            answered = sum(
                r.confidence > 0 and r.confidence >= t.threshold and r.right for r in reps
            )
            share = "-" if t.precision is None else f"{t.precision:.3f}"
            print(
                f"  {t.threshold:g}: answered {t.answered}, right {t.right} ({share}); "
                f"repeats answered rightly {answered}/{len(reps)}"
            )
    fitted = lowest_threshold(halves["first"], args.target)
    said = "none" if fitted is None else f"{fitted.threshold:g}"
    print(f"fitted on the first halves (right >= {args.target:g} of the time): {said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
