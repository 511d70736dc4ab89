"""``python -m casework.apps.receipts.data.memory_sweep [SLUG...]`` measures the memory layer's
threshold on your imported receipts (all of them when no slug is given; ``CASEWORK_HOME``
names the store): their evaluation cases (``dataset.build_cases``, in the evaluation's
order) are split in two, the first half stored as verified examples in a temporary store
(each case's gold label, as a reviewer would verify it), and each word of the second half
is decided by the ``memory`` strategy alone (no model). A remembered verdict is right when it
is the case's expected verdict. The table says, per threshold on the memory's confidence, how
many words it would answer and how many of those rightly; the same word asked with another
suggested label (a case's twin) is counted apart, since that is a repeat, not a neighbour."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from casework.apps.receipts.dataset import build_cases
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.memory import EXAMPLES, memory
from casework.apps.receipts.models import LabelInput
from casework.config import get_settings
from casework.errors import CaseworkError
from casework.runtime import RunConfig
from casework.runtime.memory import ExampleDraft, Memory
from casework.runtime.memory_layer import threshold_report, threshold_table
from casework.stores import open_stores

__all__ = ["THRESHOLDS", "main", "sweep"]

THRESHOLDS = (50.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 100.0)


def _word(case: dict[str, Any]) -> tuple[str, int, int]:
    inputs = case["inputs"]
    return (str(inputs["receipt"]), int(inputs["line_id"]), int(inputs["word_id"]))


def sweep(slugs: list[str] | None) -> list[dict[str, Any]]:
    """One row per measured case: the memory's confidence (0: not answered), whether its
    verdict was right, whether the same word was among the stored half."""
    settings = get_settings()
    source = build_deps(settings, with_vectors=False)
    if not source.repo.list_receipts():
        raise CaseworkError(
            "No receipts are imported yet: `casework receipts import FILE...` first."
        )
    cases = build_cases(source.repo, slugs)
    half = len(cases) // 2
    stored, measured = cases[:half], cases[half:]
    seen = {_word(c) for c in stored}
    rows = []
    with tempfile.TemporaryDirectory(prefix="casework-receipts-memory-") as folder:
        url = f"sqlite:///{(Path(folder) / 'examples.db').as_posix()}"
        own = settings.model_copy(update={"database_url": url})
        drafts = [
            (
                EXAMPLES.key_text(c["inputs"]),
                ExampleDraft(dict(c["inputs"]), EXAMPLES.answer_of(c["expected"])),
            )
            for c in stored
        ]
        Memory(open_stores(own).engine, "receipts").add_many(
            drafts, verified_by="sweep", source="import"
        )
        deps = build_deps(
            own, db_url=settings.db_url, vectors_dir=settings.vectors_dir, with_vectors=False
        ).with_cache()
        config = RunConfig.of(own)
        for case in measured:
            decision = memory(
                LabelInput.model_validate({**case["inputs"], "blind": True}), deps, config
            )
            answered = decision.verdict != "NEEDS_REVIEW"
            rows.append(
                {
                    "case": case["id"],
                    "confidence": decision.confidence if answered else 0.0,
                    "right": answered and decision.verdict == case["expected"]["verdict"],
                    "repeat": _word(case) in seen,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slugs", nargs="*", help="receipts to use (default: every one)")
    args = parser.parse_args(argv)
    try:
        rows = sweep(args.slugs or None)
    except CaseworkError as exc:
        print(exc, file=sys.stderr)
        return 2
    for name, kept in (
        ("every measured case", rows),
        ("the same word asked again (a repeat)", [r for r in rows if r["repeat"]]),
        ("words not among the stored half", [r for r in rows if not r["repeat"]]),
    ):
        table = threshold_table([(r["confidence"], r["right"]) for r in kept], THRESHOLDS)
        print(f"\n{name}: {len(kept)} cases (the first half of the order stored)")
        print(threshold_report(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
