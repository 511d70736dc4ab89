"""``python -m casework.apps.documents.data.memory_sweep RUN/report.json`` measures the memory
layer's threshold on a stored ``casework eval documents --learn`` run (the run with memory):
each case the memory read something for, in the stream's order, gives the memory's
confidence (computed before the case's own answer was verified, so the figure is what the
layer would have known) and whether its extraction was right as the evaluation counts a
document right (every gold field matched after normalising). The table says, per threshold,
how many documents the memory would answer and how many of those rightly.

``--fields`` sweeps the memory's field confidences instead (each gold field it read: what the
field layer takes as read without asking the model); ``--cases`` lists the stream case by
case: the layer that decided, whether a model was asked, the memory's confidence and its
nearest example's similarity, the document's field F1 and whether it became an example."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from casework.apps.documents.normalize import field_scores, lookup, values_match
from casework.runtime.memory_layer import threshold_report, threshold_table

__all__ = ["THRESHOLDS", "case_rows", "field_outcomes", "main", "memory_outcomes"]

THRESHOLDS = (50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0)


def _memory(case: dict[str, Any]) -> dict[str, Any] | None:
    if "attack" in (case.get("inputs") or {}):
        return None
    return next((o for o in case.get("layers") or [] if o["layer"] == "memory"), None)


def _memory_readings(
    cases: list[dict[str, Any]],
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(case, the memory layer's outcome) of every document case the memory layer ran on."""
    for case in cases:
        memory = _memory(case)
        if memory is not None:
            yield case, memory


def memory_outcomes(cases: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    """(confidence, right) of the memory layer's reading of every document case; a case the
    memory read nothing for has confidence 0 (``threshold_table`` leaves it unanswered)."""
    out = []
    for case, memory in _memory_readings(cases):
        output = memory.get("output") or {}
        scores = field_scores(case.get("expected") or {}, output)
        right = output.get("verdict") == "completed" and all(scores["exact"].values())
        out.append((float(memory.get("confidence") or 0.0), bool(right)))
    return out


def field_outcomes(cases: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    """(confidence 0-100, right) of every gold field the memory layer read, in every case."""
    out = []
    for case, memory in _memory_readings(cases):
        output = memory.get("output") or {}
        read, sure = output.get("fields") or {}, output.get("confidence_scores") or {}
        for name, gold in ((case.get("expected") or {}).get("gold") or {}).items():
            found, value = lookup(read, name)
            if found and value is not None and gold is not None:
                out.append((100 * float(sure.get(name) or 0.0), values_match(gold, value)))
    return out


_NEAREST = re.compile(r"(?:nearest at|similarity) (\d\.\d+)")


def case_rows(cases: list[dict[str, Any]], learned: list[dict[str, Any]]) -> list[str]:
    """The stream as a markdown table, one row per document case (``learned``: the run's
    ``details.learning.cases``, empty for the run without memory)."""
    became = {e["case_id"]: e for e in learned}
    rows = [
        "| # | case | decided by | model | memory conf / nearest | F1 | example |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, case in enumerate(cases, 1):
        memory = _memory(case)
        if memory is None:
            continue
        paid = []
        for o in case.get("layers") or []:
            paid.append(o)
            if o.get("kept"):
                break
        nearest = _NEAREST.search((memory.get("output") or {}).get("reasoning") or "")
        entry = became.get(case["case_id"]) or {}
        example = (
            "-"
            if entry.get("example_id") is None
            else ("reviewed" if entry.get("reviewed") else "spot check")
        )
        f1 = (case.get("domain") or {}).get("document_f1")
        rows.append(
            f"| {n} | {case['case_id']} | {case.get('decided_by') or 'a person'} "
            f"| {'yes' if any(o.get('model_calls') for o in paid) else 'no'} "
            f"| {float(memory.get('confidence') or 0):.0f} / "
            f"{nearest.group(1) if nearest else '-'} "
            f"| {'-' if f1 is None else f'{f1:.2f}'} | {example} |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="report.json of an `eval documents --learn` run")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--fields", action="store_true", help="sweep the field confidences")
    shown.add_argument("--cases", action="store_true", help="list the stream case by case")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"No file at {args.report}: give a stored run's report.json.", file=sys.stderr)
        return 2
    report = json.loads(args.report.read_text(encoding="utf-8"))
    cases = report.get("cases") or []
    if args.cases:
        learned = ((report.get("details") or {}).get("learning") or {}).get("cases") or []
        print("\n".join(case_rows(cases, learned)))
        return 0
    outcomes = field_outcomes(cases) if args.fields else memory_outcomes(cases)
    if not outcomes:
        print(
            "The run has no memory layer outcomes: run the cascade with --learn.", file=sys.stderr
        )
        return 2
    print(threshold_report(threshold_table(outcomes, THRESHOLDS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
