"""Start-up: wall seconds of the commands a user expects at once (help and a usage error).

Each command runs in a fresh process (``python -m casework.cli``, what the ``casework``
script runs), several times; the figure is the median. ``--check`` holds every command to
``STARTUP_SECONDS_MAX`` on an idle machine: the CLI imports LangChain, Chroma, torch and the
model only inside the commands that use them (issue #31, part 7).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = [
    "STARTUP_COMMANDS",
    "STARTUP_SECONDS_MAX",
    "check_startup",
    "print_startup_report",
    "run_startup_bench",
]

STARTUP_SECONDS_MAX = 0.5
"""Median wall seconds that ``--check`` holds each start-up command to."""

STARTUP_COMMANDS: dict[str, tuple[list[str], int]] = {
    "casework --help": (["--help"], 0),
    "casework vanpool --help": (["vanpool", "--help"], 0),
    "casework eval --help": (["eval", "--help"], 0),
    "casework vanpool bogus": (["vanpool", "bogus"], 2),
}
"""Each command's arguments and the exit code it must end with (2: a usage error)."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _seconds(args: list[str], expected: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh process."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "casework.cli", *args],
        capture_output=True,
        env={**os.environ, "COLUMNS": "100"},
        check=False,
    )
    seconds = time.perf_counter() - started
    cpu = _children_cpu() - cpu
    if done.returncode != expected:
        raise RuntimeError(
            f"`casework {' '.join(args)}` exited {done.returncode}, not {expected}: "
            f"{done.stderr.decode(errors='replace').strip()[-300:]}"
        )
    return seconds, cpu


def run_startup_bench(repeats: int = 5) -> dict[str, Any]:
    """Median and range of wall seconds (and median CPU seconds) per command over ``repeats`` fresh processes, after
    one unmeasured run of each (Python's bytecode cache is written once, not per call)."""
    for args, expected in STARTUP_COMMANDS.values():
        _seconds(args, expected)
    commands = {}
    for name, (args, expected) in STARTUP_COMMANDS.items():
        runs = [_seconds(args, expected) for _ in range(repeats)]
        walls = [wall for wall, _ in runs]
        commands[name] = {
            "median_seconds": statistics.median(walls),
            "min_seconds": min(walls),
            "max_seconds": max(walls),
            # CPU time barely moves with the machine's load: the idle figure's floor
            "median_cpu_seconds": statistics.median(cpu for _, cpu in runs),
        }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "repeats": repeats,
        "limit_seconds": STARTUP_SECONDS_MAX,
        "load_average_1m": load,
        "commands": commands,
    }


def check_startup(result: dict[str, Any]) -> str | None:
    """A sentence naming the commands over the limit, or None."""
    over = [
        f"`{name}` {row['median_seconds']:.2f} s"
        for name, row in result["commands"].items()
        if row["median_seconds"] > result["limit_seconds"]
    ]
    if over:
        return (
            f"median start-up over {result['limit_seconds']} s: {', '.join(over)} "
            f"(1-minute load {result['load_average_1m']:.1f}; the limit is for an idle machine)."
        )
    return None


def print_startup_report(result: dict[str, Any], console: Console) -> None:
    table = Table("command", "median s", "min s", "max s", "median CPU s", "limit s")
    for name, row in result["commands"].items():
        table.add_row(
            name,
            f"{row['median_seconds']:.3f}",
            f"{row['min_seconds']:.3f}",
            f"{row['max_seconds']:.3f}",
            f"{row['median_cpu_seconds']:.3f}",
            f"{result['limit_seconds']}",
        )
    load = result["load_average_1m"]
    console.print(
        f"start-up · {result['repeats']} fresh processes per command"
        + ("" if load is None else f" · 1-minute load {load:.1f}")
    )
    console.print(table)
