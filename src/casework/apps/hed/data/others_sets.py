"""Writes the sets of annotations by others the hed README measures the learning curve on.

Neither set is committed: this module rebuilds them from a work tree of the public
hed-standard/hed-examples repository (a ``git clone``; the README's figures used commit
4d11f56). A case is one categorical level of a BIDS events sidecar: the level's description
(``Levels``) as the input and its authors' HED string (``HED``) as the gold answer. A level is
left out when its HED needs context the case cannot carry (``Def/``, ``Onset``, ``Offset``,
``Inset``, a ``#`` value or a ``{column}`` placeholder) or is not valid under the schema the
cases name (8.3.0; a sidecar's ``Definition/`` strings are not, standing alone). The order is
the sidecars' order below, then the file's: the ``--learn`` curve feeds them in that order.

* ``others`` (48 at 4d11f56): Sternberg working memory, auditory-visual attention shift, guard
  duty, driving with random sounds, face perception.
* ``more`` (65 at 4d11f56): the three AOMIC fMRI tasks, the soccer go/no-go fMRI task, and the
  face perception sidecar of ``eeg_ds003645s_hed_demo``. Many are ``Label/...`` strings.

Run::

    git clone https://github.com/hed-standard/hed-examples
    python -m casework.apps.hed.data.others_sets hed-examples --set others -o hed_others.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from casework.apps.hed.validation import validate_many

SCHEMA = "8.3.0"
SETS: dict[str, tuple[str, ...]] = {
    "others": (
        "datasets/eeg_ds004117s_hed_sternberg/task-WorkingMemory_events.json",
        "datasets/eeg_ds002893s_hed_attention_shift/task-AuditoryVisualShift_events.json",
        "datasets/eeg_ds004106s_hed/task-GuardDuty_events.json",
        "datasets/eeg_ds004105s_hed/task-DriveRandomSound_events.json",
        "datasets/eeg_ds003645s_hed/task-FacePerception_events.json",
    ),
    "more": (
        "datasets/fmri_ds002790s_hed_aomic/task-emomatching_acq-seq_events.json",
        "datasets/fmri_ds002790s_hed_aomic/task-stopsignal_acq-seq_events.json",
        "datasets/fmri_ds002790s_hed_aomic/task-workingmemory_acq-seq_events.json",
        "datasets/fmri_soccer21s_hed/task-soc21gng_events.json",
        "datasets/eeg_ds003645s_hed_demo/task-FacePerception_events.json",
    ),
}
NEEDS_CONTEXT = ("Def/", "Onset", "Offset", "Inset", "#", "{")


def sidecar_levels(sidecar: dict[str, Any], dataset: str) -> list[dict[str, Any]]:
    """The sidecar's categorical levels that carry both a description and a HED string
    needing no context, as evaluation cases (not yet validated)."""
    cases = []
    for column, spec in sidecar.items():
        if not isinstance(spec, dict):
            continue
        levels, hed = spec.get("Levels"), spec.get("HED")
        if not isinstance(levels, dict) or not isinstance(hed, dict):
            continue  # a value column, or levels without HED
        for level, description in levels.items():
            gold = hed.get(level)
            if not isinstance(gold, str) or not gold.strip() or not str(description).strip():
                continue
            if any(mark in gold for mark in NEEDS_CONTEXT):
                continue
            cases.append(
                {
                    "id": f"{dataset}/{column}/{level}",
                    "inputs": {"description": str(description).strip(), "schema_version": SCHEMA},
                    "expected": {"hed": gold.strip(), "valid": True},
                    "metadata": {"dataset": dataset, "column": column, "level": level},
                }
            )
    return cases


def build(tree: Path, name: str) -> list[dict[str, Any]]:
    """The named set's cases from a hed-examples work tree, invalid gold strings left out."""
    cases: list[dict[str, Any]] = []
    for relative in SETS[name]:
        path = tree / relative
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} is missing: give a work tree of hed-standard/hed-examples "
                "(a git clone), not a bare git directory."
            )
        sidecar = f"{path.parent.name}/{path.stem.removesuffix('_events')}"
        cases += sidecar_levels(json.loads(path.read_text(encoding="utf-8")), sidecar)
    results = validate_many([c["expected"]["hed"] for c in cases], SCHEMA, validator="python")
    return [case for case, result in zip(cases, results, strict=True) if result.valid]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("tree", type=Path, help="a work tree of hed-standard/hed-examples")
    parser.add_argument("--set", choices=sorted(SETS), default="others", dest="name")
    parser.add_argument("-o", "--out", type=Path, required=True, help="the JSONL to write")
    args = parser.parse_args(argv)
    try:
        cases = build(args.tree, args.name)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None
    text = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases)
    args.out.write_text(text, encoding="utf-8")
    datasets = len({case["metadata"]["dataset"] for case in cases})
    print(f"Wrote {len(cases)} cases from {datasets} sidecars to {args.out}.")


if __name__ == "__main__":
    main()
