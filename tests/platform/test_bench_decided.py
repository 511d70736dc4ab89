"""`casework bench decided`: which cases count as decided, and the check's sentence."""

from __future__ import annotations

from pathlib import Path

from casework.bench.decided import check_decided, first_and_later_model_cases, run_decided_bench
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


def test_the_first_model_case_is_timed_apart_from_the_later_ones() -> None:
    paid = [{"layer": "choice", "kept": True, "model_calls": 1}]
    cases = [
        _case(verdict="VALID", wall_seconds=0.1),  # no model: not counted
        _case(verdict="VALID", layers=paid, decided_by="choice", wall_seconds=9.0),
        _case(verdict="VALID", efficiency={"model_calls": 2}, wall_seconds=3.0),
        _case(verdict="VALID", layers=paid, decided_by="choice", wall_seconds=1.0),
        _case(verdict="VALID", layers=paid, decided_by="choice", wall_seconds=2.0),
    ]
    assert first_and_later_model_cases(cases) == (9.0, 2.0)
    assert first_and_later_model_cases(cases[:2]) == (9.0, None)
    assert first_and_later_model_cases(cases[:1]) == (None, None)
