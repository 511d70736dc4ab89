"""API throughput: GETs of the receipts list and the review queue against a real server.

A seeded temporary home (the bundled receipts plus a review queue), a uvicorn server in its own
process on a free loopback port (so the client does not share its interpreter), and an httpx
async client sending ``requests`` GETs, ``concurrency`` at a time, alternating the two routes.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

__all__ = ["ROUTES", "TARGET_RPS", "print_api_report", "run_api_bench"]

ROUTES = ("/receipts/receipts", "/receipts/review")
TARGET_RPS = 1000.0
"""Requests per second the two routes must sustain at concurrency 20 (``--check``)."""
REVIEW_ITEMS = 60
"""NEEDS_REVIEW relabels seeded so the review route has a real queue to return."""
STARTUP_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed_home(home: Path) -> tuple[int, str]:
    """Import the bundled receipts into ``home``, queue relabels for review and add a user with
    a token (every app route checks the caller); returns the queue's length and the token."""
    from casework.access.service import create_token, create_user, open_access
    from casework.apps.receipts.dataset import CONFUSIONS
    from casework.apps.receipts.deps import build_deps
    from casework.apps.receipts.models import ValidationStatus
    from casework.apps.receipts.repository import LabelChange
    from casework.apps.receipts.service import seed
    from casework.config import Settings

    deps = build_deps(Settings(home=home), with_vectors=False)
    seed(deps, index=False)
    labels = [lab for lab in deps.repo.current_labels() if lab.label_type in CONFUSIONS]
    deps.repo.append_labels(
        [
            LabelChange(
                word_pk=lab.word_pk,
                label_type=CONFUSIONS[lab.label_type][0],
                status=ValidationStatus.NEEDS_REVIEW,
                proposed_by="bench",
                reasoning="Queued by the API benchmark.",
                replaces_id=lab.id,
                consolidated_from_id=lab.id,
            )
            for lab in labels[:: max(1, len(labels) // REVIEW_ITEMS)][:REVIEW_ITEMS]
        ]
    )
    deps.repo.engine.dispose()
    access = open_access(Settings(home=home))
    create_user(access, "bench")
    _, token = create_token(access, "bench")
    access.dispose()
    return len(deps.repo.review_queue()), token


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_server(home: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CASEWORK_HOME": str(home)}
    env.pop("CASEWORK_DATABASE_URL", None)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "casework.server:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def _wait_ready(client: httpx.AsyncClient, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode(errors="replace") if server.stderr else ""
            raise RuntimeError(f"The API server exited on start: {err.strip()[-400:]}")
        try:
            if (await client.get(ROUTES[0])).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError(f"The API server did not answer within {STARTUP_TIMEOUT_S:.0f} s.")


async def _drive(
    base: str, token: str, server: subprocess.Popen[bytes], requests: int, concurrency: int
) -> tuple[float, list[float], int, float | None]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        base_url=base, limits=limits, timeout=30.0, headers=headers
    ) as client:
        await _wait_ready(client, server)
        for route in ROUTES:  # warm-up: first requests open stores and import modules
            (await client.get(route)).raise_for_status()
        latencies: list[float] = []
        errors = 0
        queue: asyncio.Queue[str] = asyncio.Queue()
        for i in range(requests):
            queue.put_nowait(ROUTES[i % len(ROUTES)])

        async def worker() -> None:
            nonlocal errors
            while not queue.empty():
                route = queue.get_nowait()
                t0 = time.perf_counter()
                res = await client.get(route)
                latencies.append(time.perf_counter() - t0)
                errors += res.status_code != 200

        cpu0 = _cpu_seconds(server.pid)
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - t0
        cpu1 = _cpu_seconds(server.pid)
        server_cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
        return elapsed, latencies, errors, server_cpu


def run_api_bench(
    requests: int = 1000, concurrency: int = 20, target: float = TARGET_RPS
) -> dict[str, Any]:
    """Seed a temporary home, serve it, and measure throughput and latency of ``ROUTES``."""
    with tempfile.TemporaryDirectory(prefix="casework-bench-api-") as tmp:
        home = Path(tmp)
        queued, token = seed_home(home)
        port = _free_port()
        server = _start_server(home, port)
        try:
            elapsed, latencies, errors, server_cpu = asyncio.run(
                _drive(f"http://127.0.0.1:{port}", token, server, requests, concurrency)
            )
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    ms = sorted(x * 1000 for x in latencies)
    rps = requests / elapsed
    return {
        "routes": list(ROUTES),
        "requests": requests,
        "concurrency": concurrency,
        "review_queue": queued,
        "errors": errors,
        "seconds": round(elapsed, 3),
        "requests_per_s": round(rps, 1),
        "p50_ms": round(statistics.median(ms), 2),
        "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2),
        # What one server core could sustain, whatever the client and other processes cost:
        # the client shares the machine, so on a busy machine requests/s says less.
        "server_cpu_ms_per_request": None
        if server_cpu is None
        else round(server_cpu * 1000 / requests, 3),
        "target_requests_per_s": target,
        "ok": errors == 0 and rps >= target,
    }


def print_api_report(result: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"API: {result['requests']} GETs at concurrency {result['concurrency']}")
    for col in ("routes", "requests/s", "p50 ms", "p99 ms", "server CPU/req", "errors", "target"):
        table.add_column(col)
    cpu = result["server_cpu_ms_per_request"]
    table.add_row(
        " + ".join(result["routes"]),
        f"{result['requests_per_s']:.0f}",
        f"{result['p50_ms']:.1f}",
        f"{result['p99_ms']:.1f}",
        "n/a" if cpu is None else f"{cpu:.2f} ms",
        str(result["errors"]),
        f">= {result['target_requests_per_s']:.0f}/s {'ok' if result['ok'] else 'MISSED'}",
    )
    console.print(table)
