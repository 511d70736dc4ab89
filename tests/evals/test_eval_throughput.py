"""The harness overlaps cases: a fast functional check of the throughput bench (the timing
itself, 100 cases at concurrency 10 within 15% of ideal, is `casework bench eval-throughput`)."""

from __future__ import annotations

from casework.bench.eval_throughput import run_eval_throughput_bench
from casework.config import Settings


def test_cases_run_concurrently_through_the_one_path(settings: Settings) -> None:
    result = run_eval_throughput_bench(cases=12, concurrency=6, latency=0.05, settings=settings)
    assert result["accuracy"] == 1.0 and result["errors"] == 0
    assert result["model_calls_mean"] == 2
    # cases overlap (the timing itself is the bench's job: the machine may be busy here)
    assert 2 <= result["max_concurrent_cases"] <= 6
    assert result["ideal_seconds"] == 0.2  # 12 cases x 2 calls x 50 ms / 6
