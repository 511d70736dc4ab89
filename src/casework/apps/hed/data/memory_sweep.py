"""``python -m casework.apps.hed.data.memory_sweep CASES.jsonl`` measures the memory layer's
threshold on annotations written by others: per dataset (``metadata.dataset``; one group
when the cases name none) the first half of its cases, in the file's order, is stored as verified examples in a temporary store, and each description of the
second half is annotated by the ``memory`` strategy alone (no model). A remembered annotation
is right as the evaluation counts it: valid, with tag F1 >= 0.5 against the case's gold
string (``evalsuite.USABLE_F1``). The table says, per threshold on the memory's confidence,
how many descriptions it would answer and how many of those rightly.

``--strategy memory-analogy`` sweeps the analogy layer the same way (a verified sibling's
annotation, the differing words' tags swapped).

``--demonstrations K --limit N`` measures the model layer instead: the first N measured
descriptions annotated once by the bundled model under the grammar with the look-up's draft
(the cascade's ``local`` layer), its prompt's examples the K nearest verified annotations
(K = 0: the prompt's generic two); run it under ``flock /tmp/casework-model.lock`` on a
shared machine."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
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
from casework.runtime.memory_layer import demonstrations, threshold_report, threshold_table

__all__ = ["RIGHT_F1", "THRESHOLDS", "main", "split_records", "sweep", "with_model"]

THRESHOLDS = (50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 99.0)
RIGHT_F1 = 0.5
"""The evaluation's ``USABLE_F1``: a valid annotation finding half the gold tags is right."""


Records = list[tuple[int, Any]]


def split_records(records: Records) -> tuple[Records, Records]:
    """(stored, measured): per dataset, the first half of its cases and the second."""
    groups: dict[str, Records] = {}
    for number, record in records:
        dataset = str((record.get("metadata") or {}).get("dataset", ""))
        groups.setdefault(dataset, []).append((number, record))
    stored = [r for g in groups.values() for r in g[: len(g) // 2]]
    measured = [r for g in groups.values() for r in g[len(g) // 2 :]]
    return stored, measured


def _scores(record: dict[str, Any], decision: Any) -> dict[str, float]:
    return hed_metrics(
        record["expected"], decision.model_dump(), short_form_for(decision.schema_version)
    )


def sweep(records: Records, home: Path, strategy: str = "memory") -> list[dict[str, Any]]:
    """One row per measured description: the layer's confidence (0: not answered), whether
    its annotation was right, its tag F1 (``strategy``: ``memory`` or ``memory-analogy``)."""
    settings = Settings(home=home)
    stored, measured = split_records(records)
    drafts = read_drafts(hook_of(get_app("hed")), stored)
    memory_for(settings, "hed", None).add_many(drafts, verified_by="sweep", source="import")
    deps = build_deps(settings, with_repo=False)
    config = RunConfig.of(settings)
    rows = []
    for _, record in measured:
        decision = annotate(HedInput(**record["inputs"]), deps, config, strategy=strategy)
        answered = decision.verdict == "VALID" and decision.confidence > 0
        scores = _scores(record, decision)
        rows.append(
            {
                "description": record["inputs"]["description"],
                "confidence": decision.confidence if answered else 0.0,
                "right": bool(answered and scores["valid"] and scores["tag_f1"] >= RIGHT_F1),
                "tag_f1": round(scores["tag_f1"], 3),
                "exact": scores["exact_match"],
                "annotation": decision.annotation,
                "reasoning": decision.reasoning,
            }
        )
    return rows


def with_model(records: Records, home: Path, k: int, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` measured descriptions annotated once by the bundled model, shown
    the ``k`` nearest verified annotations: one row each."""
    settings = Settings(home=home)
    stored, measured = split_records(records)
    drafts = read_drafts(hook_of(get_app("hed")), stored)
    memory = memory_for(settings, "hed", None)
    memory.add_many(drafts, verified_by="sweep", source="import")
    base = build_deps(settings, with_repo=False)
    config = RunConfig.of(settings)
    rows = []
    for _, record in measured[:limit]:
        description = record["inputs"]["description"]
        shown = demonstrations(memory, description, k)
        pairs = tuple((d.key_text, str(d.answer["hed"])) for d in reversed(shown))
        deps = replace(base, grammar=True, draft=True, demonstrations=pairs)
        decision = annotate(HedInput(**record["inputs"]), deps, config, strategy="one-shot")
        scores = _scores(record, decision)
        usage = decision.run.usage if decision.run is not None else None
        rows.append(
            {
                "description": description,
                "annotation": decision.annotation,
                "valid": scores["valid"],
                "tag_f1": round(scores["tag_f1"], 3),
                "right": bool(scores["valid"] and scores["tag_f1"] >= RIGHT_F1),
                "input_tokens": usage.input_tokens if usage else 0,
                "seconds": usage.wall_seconds if usage else 0.0,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", type=Path, help="JSONL: inputs.description, expected.hed")
    parser.add_argument("--out", type=Path, help="write the per-description rows here (JSONL)")
    parser.add_argument(
        "--strategy", choices=("memory", "memory-analogy"), default="memory", help="the layer swept"
    )
    parser.add_argument("--demonstrations", type=int, metavar="K", help="measure the model")
    parser.add_argument("--limit", type=int, default=6, help="descriptions for the model")
    args = parser.parse_args(argv)
    try:
        records = read_jsonl(args.cases)
        with tempfile.TemporaryDirectory(prefix="casework-hed-memory-") as home:
            if args.demonstrations is not None:
                rows = with_model(records, Path(home), args.demonstrations, args.limit)
            else:
                rows = sweep(records, Path(home), args.strategy)
    except CaseworkError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.demonstrations is not None:
        n = len(rows)
        f1 = sum(r["tag_f1"] for r in rows) / n if n else 0.0
        print(
            f"k={args.demonstrations}: tag F1 {f1:.3f}, right {sum(r['right'] for r in rows)}/{n}, "
            f"valid {sum(r['valid'] for r in rows):.0f}/{n}, "
            f"{sum(r['input_tokens'] for r in rows)} prompt tokens, "
            f"{sum(r['seconds'] for r in rows):.0f} s"
        )
        return 0
    table = threshold_table([(r["confidence"], r["right"]) for r in rows], THRESHOLDS)
    print(f"{len(rows)} descriptions measured (the second half of each dataset)")
    print(threshold_report(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
