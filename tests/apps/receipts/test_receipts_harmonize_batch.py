"""`receipts harmonize` on the batch seam: local gives the result it gave before the seam, a
worker that arrives without deps (as on Ray) opens its own and decides alike, and bad
executor options are one sentence."""

from __future__ import annotations

import asyncio
import json
import pickle
import sys
from pathlib import Path

import pytest

from casework import cli
from casework.apps.receipts.deps import build_deps
from casework.apps.receipts.harmonizer import _Validate, find_outliers, harmonize
from casework.apps.receipts.strategies import STRATEGIES
from casework.config import get_settings

# What `harmonize` with the rules strategy planned on the four small receipts before it ran
# on run_batch: (receipt, line, word, label, suggestion, verdict, confidence, outcome).
RULES_FIXES = [
    ("bluebottle", 1, 2, "MERCHANT_NAME", "PRODUCT_NAME", "NEEDS_REVIEW", 80.0, "REVIEW"),
    ("bluebottle", 5, 2, "STORE_HOURS", "TIME", "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("casaverde", 5, 1, "WEBSITE", "MERCHANT_NAME", "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("casaverde", 20, 1, "PAYMENT_METHOD", None, "NEEDS_REVIEW", 70.0, "REVIEW"),
    ("chevron", 7, 1, "PRODUCT_NAME", None, "NEEDS_REVIEW", 80.0, "REVIEW"),
    ("chevron", 7, 2, "PRODUCT_NAME", None, "NEEDS_REVIEW", 80.0, "REVIEW"),
    ("chevron", 9, 3, "LINE_TOTAL", "GRAND_TOTAL", "NEEDS_REVIEW", 70.0, "REVIEW"),
    ("chevron", 10, 2, "PRODUCT_NAME", None, "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("chevron", 10, 3, "PRODUCT_NAME", None, "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("chevron", 17, 3, "LOYALTY_ID", None, "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("chevron", 18, 5, "MERCHANT_NAME", None, "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("walgreens", 6, 1, "STORE_HOURS", "TIME", "NEEDS_REVIEW", 80.0, "REVIEW"),
    ("walgreens", 6, 2, "STORE_HOURS", "TIME", "INVALID", 85.0, "REVIEW"),
    ("walgreens", 13, 1, "COUPON", None, "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("walgreens", 13, 2, "COUPON", None, "NEEDS_REVIEW", 50.0, "REVIEW"),
    ("walgreens", 18, 1, "PAYMENT_METHOD", None, "NEEDS_REVIEW", 70.0, "REVIEW"),
    ("walgreens", 21, 1, "LOYALTY_ID", None, "NEEDS_REVIEW", 50.0, "REVIEW"),
]


def _planned(report_dict: dict) -> list[tuple]:
    return [
        (
            f["receipt"],
            f["line_id"],
            f["word_id"],
            f["label"],
            f["suggestion"],
            f["decision"],
            f["confidence"],
            f["outcome"],
        )
        for f in report_dict["fixes"]
    ]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_local_executor_plans_what_harmonize_planned_before(small, concurrency):
    report = asyncio.run(
        harmonize(
            small.with_cache(),
            "rules",
            STRATEGIES["rules"],
            dry_run=True,
            executor="local",
            concurrency=concurrency,
            open_deps=build_deps,
        )
    ).to_dict()
    assert report["labels_scanned"] == 154
    assert report["outcomes"] == {"RELABEL": 0, "MARK_INVALID": 0, "REVIEW": 17, "KEEP": 0}
    assert _planned(report) == RULES_FIXES


def test_a_worker_without_deps_opens_its_own_and_decides_alike(small):
    """What a Ray worker receives: the pickled validation, without the caller's stores."""
    local = _Validate(STRATEGIES["rules"], small.settings, build_deps, deps=small)
    shipped = pickle.loads(pickle.dumps(local))
    assert shipped.deps is None and local.deps is small
    refs = [o.ref() for o in find_outliers(small)[0][:4]]
    assert len(refs) == 4
    here = [local(ref) for ref in refs]
    there = [shipped(ref) for ref in refs]
    assert shipped.deps is not None and shipped.deps is not small
    assert [(d.verdict, d.confidence) for d in there] == [(d.verdict, d.confidence) for d in here]
    assert [d.verdict for d in here] == ["NEEDS_REVIEW"] * 4


@pytest.fixture
def run(small, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``run(*args)`` -> (exit code, stdout, stderr) of ``casework receipts harmonize ARGS``."""

    def invoke(*args: str) -> tuple[int, str, str]:
        monkeypatch.setenv("CASEWORK_HOME", str(Path(small.settings.home)))
        monkeypatch.setenv("COLUMNS", "1000")  # Rich must not wrap the sentence
        get_settings.cache_clear()
        monkeypatch.setattr(sys, "argv", ["casework", "receipts", "harmonize", *args])
        code = 0
        try:
            cli.main()
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        get_settings.cache_clear()
        out = capsys.readouterr()
        return code, out.out, out.err

    return invoke


def test_cli_runs_harmonize_on_the_local_executor(run):
    code, out, _ = run(
        "--strategy", "rules", "--dry-run", "--json", "--executor", "local", "--concurrency", "2"
    )
    assert code == 0
    assert _planned(json.loads(out)) == RULES_FIXES


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "spark"], "error: Unknown executor 'spark'; use local or ray."),
        (["--address", "10.0.0.5:6379"], "error: --address is only for --executor ray."),
    ],
)
def test_bad_executor_options_are_one_sentence(run, small, args, message):
    before = small.repo.count_labels()
    code, out, err = run("--strategy", "rules", *args)
    assert (code, out, err.strip()) == (2, "", message)
    assert small.repo.count_labels() == before
