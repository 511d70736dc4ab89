"""``python -m casework.apps.receipts.data.make_cases`` regenerates ``data/eval/cases.jsonl``
from the bundled receipts, imported into a temporary store (a test checks the file is current).
The cases themselves are ``dataset.build_cases``'s, from the receipts' labels only."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from casework.apps.receipts.dataset import CASES_PATH, build_cases, read_audit, write_cases
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.service import bundled_receipt_files, import_files
from casework.config import Settings

__all__ = ["build_bundled_cases", "main"]


def build_bundled_cases() -> list[dict]:
    """The cases of the bundled receipts, built in a temporary store (no vectors)."""
    with tempfile.TemporaryDirectory(prefix="casework-cases-") as home:
        deps = build_deps(Settings(home=Path(home)), with_vectors=False)
        import_files(deps, bundled_receipt_files(), index=False)
        cases = build_cases(deps.repo, audit=read_audit())
        deps.repo.engine.dispose()
    return cases


def main() -> None:
    n = write_cases(build_bundled_cases())
    print(f"wrote {n} cases to {CASES_PATH}", file=sys.stderr)


if __name__ == "__main__":
    main()
