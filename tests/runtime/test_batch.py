"""The batch seam: order, errors as results, unique ids, and on Ray a killed worker's retry."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from casework.errors import ConfigError, InputError
from casework.runtime.batch import BatchConfig, BatchResult, WorkerLost, run_batch


def _square(x: int) -> int:
    if x == 3:
        raise ValueError("three is not allowed")
    time.sleep(0.01 * (5 - x % 5))  # later items finish first
    return x * x


def test_local_results_come_back_in_item_order_with_errors_as_results() -> None:
    seen: list[int] = []
    results = run_batch(
        list(range(8)),
        _square,
        BatchConfig(concurrency=4, progress=lambda r: seen.append(r.index)),
    )
    assert [r.index for r in results] == list(range(8))
    assert [r.value for r in results] == [0, 1, 4, None, 16, 25, 36, 49]
    assert isinstance(results[3].error, ValueError) and not results[3].ok
    assert all(r.attempts == 1 for r in results)
    assert sorted(seen) == list(range(8)) and seen != list(range(8))  # progress as they finish


def test_local_runs_at_most_concurrency_items_at_once() -> None:
    lock = threading.Lock()
    now, most = [0], [0]

    def slow(x: int) -> int:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1
        return x

    started = time.perf_counter()
    run_batch(list(range(12)), slow, BatchConfig(concurrency=3))
    assert most[0] == 3
    assert time.perf_counter() - started < 12 * 0.05  # overlapped, not one by one


def test_bad_configs_and_duplicate_ids_are_one_sentence_input_errors() -> None:
    with pytest.raises(InputError, match="own"):
        run_batch(["a", "b", "a"], str.upper, key=lambda s: s)
    with pytest.raises(InputError, match="at least 1"):
        run_batch([1], str, BatchConfig(concurrency=0))
    with pytest.raises(InputError, match="only for --executor ray"):
        run_batch([1], str, BatchConfig(address="127.0.0.1:6379"))
    assert run_batch([], str) == []


def test_missing_ray_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'casework\[ray\]'"):
        run_batch([1], str, BatchConfig(executor="ray"))


def test_a_ray_address_that_does_not_answer_fails_fast() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=f"No Ray cluster answers at 127.0.0.1:{port}"):
        run_batch([1], str, BatchConfig(executor="ray", address=f"127.0.0.1:{port}"))
    assert time.perf_counter() - started < 5
    with pytest.raises(InputError, match="HOST:PORT"):
        run_batch([1], str, BatchConfig(executor="ray", address="nowhere"))


# --- on a real (local) Ray: slow to start, so one session for the module -----------------


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    # Ray workers cannot import this test module: its functions travel by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


class _DiesOnce:
    """Kills its worker process the first time it sees each of ``doomed`` (a marker file says
    it already did), and logs every completed run, to count runs per item."""

    def __init__(self, folder: Path, doomed: set[int]) -> None:
        self.folder = folder
        self.doomed = doomed

    def __call__(self, x: int) -> int:
        marker = self.folder / f"died-{x}"
        if x in self.doomed and not marker.exists():
            marker.touch()
            os._exit(1)  # the worker process dies mid-item
        with (self.folder / "runs.log").open("a") as fh:
            fh.write(f"{x}\n")
        if x == 5:
            raise KeyError("five")
        return x * 10


@pytest.mark.slow
def test_ray_retries_a_killed_worker_and_counts_no_item_twice(
    ray_session: None, tmp_path: Path
) -> None:
    seen: list[BatchResult[int]] = []
    results = run_batch(
        list(range(8)),
        _DiesOnce(tmp_path, doomed={2, 6}),
        BatchConfig(executor="ray", concurrency=2, progress=seen.append),
    )
    assert [r.value for r in results] == [0, 10, 20, 30, 40, None, 60, 70]
    assert [r.attempts for r in results] == [1, 1, 2, 1, 1, 1, 2, 1]
    assert isinstance(results[5].error, KeyError)  # fn's own error travels back, not retried
    runs = sorted(int(line) for line in (tmp_path / "runs.log").read_text().split())
    assert runs == list(range(8))  # every item completed exactly once
    assert sorted(r.index for r in seen) == list(range(8))


@pytest.mark.slow
def test_ray_gives_up_on_an_item_whose_worker_always_dies(
    ray_session: None, tmp_path: Path
) -> None:
    def always_dies(x: int) -> int:
        if x == 1:
            os._exit(1)
        return x

    results = run_batch(
        [0, 1, 2], always_dies, BatchConfig(executor="ray", concurrency=2, retries=1)
    )
    assert [r.value for r in results] == [0, None, 2]
    assert isinstance(results[1].error, WorkerLost) and results[1].attempts == 2
