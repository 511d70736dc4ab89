"""One batch seam: ``run_batch(items, fn, config)`` on worker threads here, or on a Ray cluster.

``local`` runs ``fn`` on a pool of ``concurrency`` threads driven by asyncio (the evaluation
harness's pool: the same throughput as before). ``ray`` runs each item as a Ray task, at most
``concurrency`` in flight, on a cluster at ``address`` or on a local Ray started for the batch.

``fn`` crosses to Ray workers pickled (cloudpickle), once per batch, and each worker process
keeps its copy for every item it runs: a callable that builds heavy state (stores, the model
from its provider spec) lazily on its first call builds it once per worker, and never ships a
live model. An exception ``fn`` raises is that item's result (``BatchResult.error``), not
retried here; a worker that dies mid-item (its process killed, its node lost) has the item
retried up to ``retries`` times. Results come back in item order, one per item key: a result
that arrives for a key already answered is dropped, so no item counts twice.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from casework.errors import ConfigError, InputError

__all__ = [
    "BatchConfig",
    "BatchResult",
    "WorkerLost",
    "arun_batch",
    "check_batch_config",
    "run_batch",
]

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS: tuple[str, ...] = ("local", "ray")


class WorkerLost(RuntimeError):
    """The item's worker died on every attempt (its process was killed or its node lost)."""


@dataclass(frozen=True)
class BatchResult(Generic[R]):
    """What one item gave: ``value``, or the ``error`` ``fn`` raised (or ``WorkerLost``)."""

    index: int
    key: Hashable
    value: R | None
    error: BaseException | None
    attempts: int
    """1, plus one per worker that died running the item."""
    seconds: float
    """Wall time of the attempt that answered (where it ran)."""

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class BatchConfig:
    executor: str = "local"
    """``local`` or ``ray``."""
    address: str | None = None
    """A Ray cluster (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``); None starts a local Ray
    with ``concurrency`` CPUs. Only for ``executor="ray"``."""
    concurrency: int = 4
    """Items in flight at once: threads (local) or Ray tasks (ray)."""
    retries: int = 2
    """Attempts after a worker died mid-item."""
    progress: Callable[[BatchResult[Any]], None] | None = None
    """Called in the caller's process as each item finishes (in completion order)."""
    stagger: float = 0.0
    """Seconds between the start of one local worker and the next."""
    connect_timeout: float = 10.0
    """Seconds to wait for a Ray address to answer before giving up."""


def _key_of(key: Callable[[Any], Hashable] | None, index: int, item: Any) -> Hashable:
    return index if key is None else key(item)


def _timed(fn: Callable[[T], R], item: T) -> tuple[R | None, BaseException | None, float]:
    started = time.perf_counter()
    try:
        return fn(item), None, time.perf_counter() - started
    except Exception as exc:
        return None, exc, time.perf_counter() - started


async def _run_local(
    items: Sequence[T], keys: list[Hashable], fn: Callable[[T], R], config: BatchConfig
) -> dict[Hashable, BatchResult[R]]:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(items)):
        queue.put_nowait(i)
    results: dict[Hashable, BatchResult[R]] = {}
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="casework-batch")

    async def worker(k: int) -> None:
        if k and config.stagger:
            await asyncio.sleep(k * config.stagger)
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            ctx = contextvars.copy_context()  # the caller's context vars reach fn
            value, error, seconds = await loop.run_in_executor(pool, ctx.run, _timed, fn, items[i])
            _take(results, BatchResult(i, keys[i], value, error, 1, seconds), config)

    try:
        workers = max(1, min(config.concurrency, len(items)))
        await asyncio.gather(*(worker(k) for k in range(workers)))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return results


def _take(
    results: dict[Hashable, BatchResult[R]], result: BatchResult[R], config: BatchConfig
) -> None:
    """Keep the first result of each key (a retried item may answer twice)."""
    if result.key in results:
        return
    results[result.key] = result
    if config.progress is not None:
        config.progress(result)


# --- Ray ---------------------------------------------------------------------------------

_WORKER_FNS: dict[str, Any] = {}
"""Per Ray worker process: the batch's ``fn`` by batch token, unpickled once per process."""


def _ray_item(token: str, fn_box: list[Any], item: Any) -> tuple[Any, BaseException | None, float]:
    """Runs in a Ray worker: ``fn(item)``. ``fn_box`` holds the ObjectRef of ``fn`` inside a
    list, so Ray does not fetch and unpickle it for every task."""
    import ray

    fn = _WORKER_FNS.get(token)
    if fn is None:
        fn = _WORKER_FNS[token] = ray.get(fn_box[0])
    value, error, seconds = _timed(fn, item)
    if error is not None:
        try:
            ray.cloudpickle.dumps(error)  # type: ignore[no-untyped-call]  # cloudpickle ships no annotations
        except Exception:  # an exception that cannot travel back travels as its one line
            error = RuntimeError(f"{type(error).__name__}: {error}")
    return value, error, seconds


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "The ray executor needs Ray: install it with pip install 'casework[ray]'."
        ) from None
    return ray


def _check_address(address: str, timeout: float) -> None:
    """Fail in one sentence, within ``timeout``, when nothing answers at ``address``
    (``ray.init`` itself would retry for minutes)."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(
            f"The Ray address {address!r} is not HOST:PORT; give e.g. --address 10.0.0.5:6379."
        )
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError:
        raise ConfigError(
            f"No Ray cluster answers at {address}: start one with `ray start --head` there, or check --address."
        ) from None


def _ray_session(ray: Any, config: BatchConfig) -> bool:
    """Connects to (or starts) Ray unless this process already did; True when we started it."""
    if ray.is_initialized():
        return False
    if config.address:
        _check_address(config.address, config.connect_timeout)
        try:
            ray.init(address=config.address, log_to_driver=False, logging_level=logging.ERROR)
        except (ConnectionError, TimeoutError, RuntimeError) as exc:
            raise ConfigError(
                f"Could not join the Ray cluster at {config.address} ({exc}); check that its Ray version matches."
            ) from None
    else:
        ray.init(
            num_cpus=config.concurrency,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    return True


def _run_ray(
    items: Sequence[T],
    keys: list[Hashable],
    fn: Callable[[T], R],
    config: BatchConfig,
    stop: threading.Event,
) -> dict[Hashable, BatchResult[R]]:
    ray = _import_ray()
    started_here = _ray_session(ray, config)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(_ray_item)
        token = uuid.uuid4().hex
        fn_box = [ray.put(fn)]
        results: dict[Hashable, BatchResult[R]] = {}
        pending = list(range(len(items)))
        pending.reverse()  # pop() takes items in order
        attempts = [0] * len(items)
        running: dict[Any, int] = {}

        def submit() -> None:
            while pending and len(running) < config.concurrency:
                i = pending.pop()
                attempts[i] += 1
                running[remote.remote(token, fn_box, items[i])] = i

        submit()
        while running:
            ready, _ = ray.wait(list(running), num_returns=1, timeout=0.5)
            if stop.is_set():  # the caller was interrupted: stop the cluster's work too
                for ref in running:
                    ray.cancel(ref, force=True)
                return results
            if not ready:
                continue
            i = running.pop(ready[0])
            try:
                value, error, seconds = ray.get(ready[0])
            except ray.exceptions.RayTaskError as exc:  # e.g. fn cannot be unpickled there
                cause = getattr(exc, "cause", None)
                error = cause if isinstance(cause, Exception) else RuntimeError(str(exc))
                value, seconds = None, 0.0
            except ray.exceptions.RayError as exc:  # the worker died: run the item again
                if attempts[i] <= config.retries:
                    pending.append(i)
                    submit()
                    continue
                value, seconds = None, 0.0
                error = WorkerLost(
                    f"The worker running item {keys[i]!r} died {attempts[i]} times ({type(exc).__name__})."
                )
            _take(results, BatchResult(i, keys[i], value, error, attempts[i], seconds), config)
            submit()
        return results
    finally:
        if started_here:
            ray.shutdown()


def check_batch_config(config: BatchConfig) -> None:
    """Raises the one-sentence error of a config that cannot run (Ray missing included), so a
    caller can check before it writes anything."""
    if config.executor not in EXECUTORS:
        raise InputError(f"Unknown executor {config.executor!r}; use local or ray.")
    if config.concurrency < 1:
        raise InputError("Concurrency must be at least 1.")
    if config.retries < 0:
        raise InputError("Retries must be 0 or more.")
    if config.address and config.executor != "ray":
        raise InputError("--address is only for --executor ray.")
    if config.executor == "ray":
        _import_ray()


async def arun_batch(
    items: Sequence[T],
    fn: Callable[[T], R],
    config: BatchConfig | None = None,
    *,
    key: Callable[[T], Hashable] | None = None,
) -> list[BatchResult[R]]:
    """``fn(item)`` for every item, as ``config`` says; one result per item, in item order.
    ``key(item)`` is the item's id (its index when None); ids must be unique."""
    config = config or BatchConfig()
    check_batch_config(config)
    keys = [_key_of(key, i, item) for i, item in enumerate(items)]
    if len(set(keys)) != len(keys):
        raise InputError("Two batch items share an id; give every item its own.")
    if not items:
        return []
    if config.executor == "ray":
        stop = threading.Event()
        try:
            results = await asyncio.to_thread(_run_ray, items, keys, fn, config, stop)
        except asyncio.CancelledError:
            stop.set()
            raise
    else:
        results = await _run_local(items, keys, fn, config)
    return [results[k] for k in keys]


def run_batch(
    items: Sequence[T],
    fn: Callable[[T], R],
    config: BatchConfig | None = None,
    *,
    key: Callable[[T], Hashable] | None = None,
) -> list[BatchResult[R]]:
    """Sync entry point of ``arun_batch`` (same arguments)."""
    return asyncio.run(arun_batch(items, fn, config, key=key))
