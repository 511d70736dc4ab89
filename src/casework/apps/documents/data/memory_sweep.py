"""``python -m casework.apps.documents.data.memory_sweep RUN/report.json`` measures the memory
layer's threshold on a stored ``casework eval documents --learn`` run (the run with memory):
each case the memory read something for, in the stream's order, gives the memory's
confidence (computed before the case's own answer was verified, so the figure is what the
layer would have known) and whether its extraction was right as the evaluation counts a
document right (every gold field matched after normalising). The table says, per threshold,
how many documents the memory would answer and how many of those rightly."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from casework.apps.documents.normalize import field_scores
from casework.runtime.memory_layer import threshold_report, threshold_table

__all__ = ["THRESHOLDS", "main", "memory_outcomes"]

THRESHOLDS = (50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0)


def memory_outcomes(cases: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    """(confidence, right) of the memory layer's reading of every document case; a case the
    memory read nothing for has confidence 0 (``threshold_table`` leaves it unanswered)."""
    out = []
    for case in cases:
        layers = {o["layer"]: o for o in case.get("layers") or []}
        memory = layers.get("memory")
        if memory is None or "attack" in (case.get("inputs") or {}):
            continue
        output = memory.get("output") or {}
        scores = field_scores(case.get("expected") or {}, output)
        right = output.get("verdict") == "completed" and all(scores["exact"].values())
        out.append((float(memory.get("confidence") or 0.0), bool(right)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="report.json of an `eval documents --learn` run")
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"No file at {args.report}: give a stored run's report.json.", file=sys.stderr)
        return 2
    cases = json.loads(args.report.read_text(encoding="utf-8")).get("cases") or []
    outcomes = memory_outcomes(cases)
    if not outcomes:
        print(
            "The run has no memory layer outcomes: run the cascade with --learn.", file=sys.stderr
        )
        return 2
    print(threshold_report(threshold_table(outcomes, THRESHOLDS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
