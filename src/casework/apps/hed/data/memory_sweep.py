"""``python -m casework.apps.hed.data.memory_sweep CASES.jsonl`` measures the memory layer's
threshold on annotations written by others: per dataset (``metadata.dataset``; one group
when the cases name none) the first half of its cases, in the file's order, is stored as verified examples in a temporary store, and each description of the
second half is annotated by the ``memory`` strategy alone (no model). A remembered annotation
is right as the evaluation counts it: valid, with tag F1 >= 0.5 against the case's gold
string (``evalsuite.USABLE_F1``). The table says, per threshold on the memory's confidence,
how many descriptions it would answer and how many of those rightly."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from casework.apps.hed.deps import build_deps
from casework.apps.hed.metrics import hed_metrics, short_form_for
from casework.apps.hed.models import HedInput
from casework.apps.hed.service import annotate
from casework.config import Settings
from casework.errors import CaseworkError
from casework.examples import hook_of, memory_for, read_drafts, read_jsonl
from casework.registry import get_app
from casework.runtime import RunConfig
from casework.runtime.memory_layer import lowest_threshold, threshold_table

__all__ = ["RIGHT_F1", "THRESHOLDS", "main", "sweep"]

THRESHOLDS = (50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 99.0)
RIGHT_F1 = 0.5
"""The evaluation's ``USABLE_F1``: a valid annotation finding half the gold tags is right."""


def sweep(records: list[tuple[int, Any]], home: Path) -> list[dict[str, Any]]:
    """One row per measured description: the memory's confidence (0: not answered), whether
    its annotation was right, its tag F1."""
    settings = Settings(home=home)
    groups: dict[str, list[tuple[int, Any]]] = {}
    for number, record in records:
        dataset = str((record.get("metadata") or {}).get("dataset", ""))
        groups.setdefault(dataset, []).append((number, record))
    stored = [r for g in groups.values() for r in g[: len(g) // 2]]
    measured = [r for g in groups.values() for r in g[len(g) // 2 :]]
    drafts = read_drafts(hook_of(get_app("hed")), stored)
    memory_for(settings, "hed", None).add_many(drafts, verified_by="sweep", source="import")
    deps = build_deps(settings, with_repo=False)
    config = RunConfig.of(settings)
    rows = []
    for _, record in measured:
        decision = annotate(HedInput(**record["inputs"]), deps, config, strategy="memory")
        answered = decision.verdict == "VALID" and decision.confidence > 0
        scores = hed_metrics(
            record["expected"], decision.model_dump(), short_form_for(decision.schema_version)
        )
        rows.append(
            {
                "description": record["inputs"]["description"],
                "confidence": decision.confidence if answered else 0.0,
                "right": bool(answered and scores["valid"] and scores["tag_f1"] >= RIGHT_F1),
                "tag_f1": round(scores["tag_f1"], 3),
                "exact": scores["exact_match"],
                "reasoning": decision.reasoning,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", type=Path, help="JSONL: inputs.description, expected.hed")
    parser.add_argument("--out", type=Path, help="write the per-description rows here (JSONL)")
    args = parser.parse_args(argv)
    try:
        records = read_jsonl(args.cases)
        with tempfile.TemporaryDirectory(prefix="casework-hed-memory-") as home:
            rows = sweep(records, Path(home))
    except CaseworkError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table = threshold_table([(r["confidence"], r["right"]) for r in rows], THRESHOLDS)
    print(f"{len(rows)} descriptions measured (the second half of each dataset)")
    print("| threshold | answered | right when answered |")
    print("|---|---|---|")
    for t in table:
        share = f"{t.precision:.3f}" if t.precision is not None else "-"
        print(
            f"| {t.threshold:g} | {t.answered} ({t.answered_share:.1%}) "
            f"| {t.right}/{t.answered} = {share} |"
        )
    best = lowest_threshold(table)
    print(f"lowest threshold right >= 95 % of the time: {best.threshold:g}" if best else "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
