"""Batch throughput: ``run_batch`` on the local and the Ray executor at 1, 2 and all cores.

Each item is one call of a scripted model that sleeps ``latency`` seconds (an I/O-bound model
call, as with a remote endpoint), built from its settings in whichever process runs the item.
The ideal wall time at W workers is ``items x latency / W``; each row gives the measured
throughput and its ratio to the ideal one (1.0 is perfect scaling). Ray's start-up (the
cluster, then one warm-up item per worker, which imports casework there) is timed apart.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from casework.errors import InputError
from casework.runtime.batch import BatchConfig, BatchResult, check_batch_config, run_batch

__all__ = ["print_batch_report", "run_batch_bench"]


def _answer(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
    return AIMessage(content="done")


class ScriptedCall:
    """``call(item)``: one scripted model call of ``latency`` seconds. Crosses to a Ray worker
    as its latency only; the model is built there on the first item."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self._model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"latency": self.latency, "_model": None}

    def __call__(self, item: int) -> int:
        if self._model is None:
            from casework.llm.scripted import ScriptedChatModel

            self._model = ScriptedChatModel(responder=_answer, latency=self.latency)
        self._model.invoke(f"item {item}")
        return os.getpid()


def _levels(cores: int) -> list[int]:
    return sorted({1, min(2, cores), cores})


def _measure(
    executor: str, workers: int, items: int, latency: float, progress: Progress | None
) -> dict[str, Any]:
    advance = None
    if progress is not None:
        task = progress.add_task(f"{executor} x{workers}", total=items)

        def advance(_: BatchResult[int]) -> None:
            progress.update(task, advance=1)

    config = BatchConfig(executor=executor, concurrency=workers, progress=advance)
    started = time.perf_counter()
    results = run_batch(list(range(items)), ScriptedCall(latency), config)
    wall = time.perf_counter() - started
    errors = [r.error for r in results if r.error is not None]
    ideal = items * latency / workers
    return {
        "executor": executor,
        "workers": workers,
        "wall_seconds": round(wall, 3),
        "ideal_seconds": round(ideal, 3),
        "items_per_second": round(items / wall, 2),
        "ratio": round(ideal / wall, 3),
        "processes": len({r.value for r in results if r.value is not None}),
        "errors": len(errors),
    }


def run_batch_bench(
    *,
    items: int = 100,
    latency: float = 0.2,
    executors: tuple[str, ...] = ("local", "ray"),
    cores: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Every executor at 1, 2 and ``cores`` workers (the machine's by default)."""
    if items < 1 or latency <= 0:
        raise InputError("Give at least 1 item and a latency above 0.")
    cores = cores or os.cpu_count() or 1
    for executor in executors:
        check_batch_config(BatchConfig(executor=executor))
    bar = None
    if progress:
        bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
        )
        bar.start()
    rows: list[dict[str, Any]] = []
    ray_start = None
    try:
        for executor in executors:
            if executor == "ray":
                import ray

                started = time.perf_counter()
                ray.init(
                    num_cpus=cores,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
                # Warm-up: a worker per core imports casework before the clock runs.
                run_batch(
                    list(range(cores)), ScriptedCall(0.05), BatchConfig("ray", concurrency=cores)
                )
                ray_start = round(time.perf_counter() - started, 2)
            try:
                for workers in _levels(cores):
                    rows.append(_measure(executor, workers, items, latency, bar))
            finally:
                if executor == "ray":
                    ray.shutdown()
    finally:
        if bar is not None:
            bar.stop()
    return {
        "items": items,
        "latency_seconds": latency,
        "cores": cores,
        "ray_start_seconds": ray_start,
        "rows": rows,
    }


def print_batch_report(result: dict[str, Any], console: Console) -> None:
    table = Table(
        "executor",
        "workers",
        "wall s",
        "ideal s",
        "items/s",
        "ratio to ideal",
        "errors",
        title=(
            f"{result['items']} items x {result['latency_seconds'] * 1000:.0f} ms scripted model "
            f"call, {result['cores']} cores"
        ),
    )
    for row in result["rows"]:
        table.add_row(
            row["executor"],
            str(row["workers"]),
            f"{row['wall_seconds']:.2f}",
            f"{row['ideal_seconds']:.2f}",
            f"{row['items_per_second']:.1f}",
            f"{row['ratio']:.2f}",
            str(row["errors"]),
        )
    console.print(table)
    if result["ray_start_seconds"] is not None:
        console.print(
            f"Ray start-up and warm-up (not in the figures): {result['ray_start_seconds']:.1f} s"
        )
