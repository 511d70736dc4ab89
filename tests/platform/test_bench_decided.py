"""`casework bench decided`: which cases count as decided, and the check's sentence."""

from __future__ import annotations

from pathlib import Path

from casework.bench.decided import check_decided, run_decided_bench
from casework.config import Settings
from casework.evals.layer_report import decided as _decided
from casework.evals.results import CaseResult


def _case(**kw: object) -> CaseResult:
    return CaseResult(case_id="c", index=0, **kw)  # type: ignore[arg-type]


def test_a_cascade_case_is_decided_when_a_layer_was_sure() -> None:
    layers = [{"layer": "rules", "kept": False}]
    assert _decided(_case(verdict="VALID", layers=layers, decided_by="choice"))
    assert not _decided(_case(verdict="NEEDS_REVIEW", layers=layers, decided_by=None))


def test_a_plain_case_is_decided_unless_it_needs_review_or_failed() -> None:
    assert _decided(_case(verdict="INVALID"))
    assert not _decided(_case(verdict="NEEDS_REVIEW"))
    assert not _decided(_case(verdict="VALID", error="ModelError: cut"))


def test_check_names_the_apps_over_their_limit() -> None:
    result = {
        "apps": {
            "receipts": {"seconds_per_decided_p50": 12.5},
            "vanpool": {"seconds_per_decided_p50": 3.0},
        }
    }
    assert check_decided(result) == (
        "median seconds per decided case over the limit: receipts 12.5 s (limit 10 s)."
    )
    assert check_decided({"apps": {"receipts": {"seconds_per_decided_p50": 9.0}}}) is None


def test_the_bench_runs_an_apps_default_strategy_on_a_sample(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, allow_network_models=False)
    result = run_decided_bench(["vanpool"], sample=3, seed=1, settings=settings)
    row = result["apps"]["vanpool"]
    assert row["cases"] == 3 and row["strategy"] == "cascade"
    assert row["decided"] == 3 and row["model_calls_mean"] == 0.0  # the rules decide every one
