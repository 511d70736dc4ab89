"""`casework bench api` end to end on a small run: a real server, both routes answered, no errors.

Throughput is measured by `make bench`, not asserted here.
"""

from __future__ import annotations

from casework.bench.api import REVIEW_ITEMS, ROUTES, run_api_bench


def test_small_api_bench_run():
    result = run_api_bench(requests=40, concurrency=4, target=1e9)
    assert result["routes"] == list(ROUTES) == ["/receipts/receipts", "/receipts/review"]
    assert (result["requests"], result["concurrency"], result["errors"]) == (40, 4, 0)
    assert result["review_queue"] == REVIEW_ITEMS
    assert result["ok"] is False  # nobody serves 10^9 requests a second
    assert 0 < result["p50_ms"] <= result["p99_ms"]
    assert result["server_cpu_ms_per_request"] is None or result["server_cpu_ms_per_request"] > 0
