"""API throughput: GETs of the receipts list and the review queue against a real server.

A seeded temporary home (the bundled receipts plus a review queue) and a uvicorn server in its
own process on a free loopback port, run as a deployment would run it (``--loop uvloop --http
httptools``, no access log). The client measures the server, not itself: ``concurrency``
keep-alive HTTP/1.1 connections on raw asyncio streams (uvloop when installed), each sending
its next GET as soon as the last answer's body is read (status line and ``Content-Length``
parsed, nothing else), alternating the two routes. An HTTP client library costs more CPU per
request than the server does, and on a two-core machine that would be the figure measured.

``server_cpu_ms_per_request`` is the server process's CPU time over the run divided by the
requests: what one server core sustains whatever the client and other processes cost.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["ROUTES", "TARGET_RPS", "check_api_bench", "print_api_report", "run_api_bench"]

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
    """The bundled receipts and a review queue in ``home`` (the receipts service's own seeding,
    through the registry), and a user with a token (every app route checks the caller);
    returns the queue's length and the token."""
    from casework.access.service import create_token, create_user, open_access
    from casework.config import Settings
    from casework.registry import app_service

    queued, _ = app_service("receipts").seed_review_queue(Settings(home=home), REVIEW_ITEMS)
    access = open_access(Settings(home=home))
    create_user(access, "bench")
    _, token = create_token(access, "bench")
    access.dispose()
    return int(queued), token


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_stack() -> list[str]:
    """uvicorn's flags for uvloop and httptools, each when installed (``casework serve``, on
    uvicorn's "auto", picks the same ones)."""
    flags: list[str] = []
    for flag, module in (("--loop", "uvloop"), ("--http", "httptools")):
        if importlib.util.find_spec(module) is not None:
            flags += [flag, module]
    return flags


_SERVER_STACK = _server_stack()


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
            *_SERVER_STACK,
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


class _Connection:
    """One keep-alive HTTP/1.1 connection that sends GETs and reads whole answers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> _Connection:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def get(self, request: bytes) -> int:
        """Send one prepared request; the answer's status (its body is read and dropped)."""
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length: int | None = None
        chunked = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
        if length is not None:
            await self.reader.readexactly(length)
        elif chunked:
            while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
                await self.reader.readexactly(size + 2)
            await self.reader.readuntil(b"\r\n")
        else:
            raise RuntimeError("The API server answered without Content-Length or chunks.")
        return status

    def close(self) -> None:
        self.writer.close()


def _request(route: str, port: int, token: str) -> bytes:
    return (
        f"GET {route} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
    ).encode()


async def _wait_ready(port: int, token: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode(errors="replace") if server.stderr else ""
            raise RuntimeError(f"The API server exited on start: {err.strip()[-400:]}")
        try:
            conn = await _Connection.open(port)
        except OSError:
            await asyncio.sleep(0.2)
            continue
        try:
            for route in ROUTES:  # warm-up: first requests open stores and import modules
                status = await conn.get(_request(route, port, token))
                if status != 200:
                    raise RuntimeError(f"The API server answered {status} on {route}.")
            return
        finally:
            conn.close()
    raise RuntimeError(f"The API server did not answer within {STARTUP_TIMEOUT_S:.0f} s.")


async def _drive(
    port: int, token: str, server: subprocess.Popen[bytes], requests: int, concurrency: int
) -> tuple[float, list[float], int, float | None]:
    await _wait_ready(port, token, server)
    prepared = [_request(route, port, token) for route in ROUTES]
    order: Iterator[int] = iter(range(requests))
    latencies: list[float] = []
    errors = 0
    connections = [await _Connection.open(port) for _ in range(concurrency)]

    async def worker(conn: _Connection) -> None:
        nonlocal errors
        for i in order:  # shared: each GET is sent by whichever connection is free
            t0 = time.perf_counter()
            status = await conn.get(prepared[i % len(prepared)])
            latencies.append(time.perf_counter() - t0)
            errors += status != 200

    try:
        cpu0 = _cpu_seconds(server.pid)
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(c) for c in connections))
        elapsed = time.perf_counter() - t0
        cpu1 = _cpu_seconds(server.pid)
    finally:
        for conn in connections:
            conn.close()
    server_cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    return elapsed, latencies, errors, server_cpu


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """uvloop's event loop when installed (a lighter client), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop
    return uvloop.new_event_loop


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
            with asyncio.Runner(loop_factory=_loop_factory()) as runner:
                elapsed, latencies, errors, server_cpu = runner.run(
                    _drive(port, token, server, requests, concurrency)
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
        "server": " ".join(_SERVER_STACK[1::2]) or "asyncio h11",
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


def check_api_bench(result: dict[str, Any]) -> str | None:
    """None when the run had no errors and met the target rate, else one sentence."""
    if result["errors"]:
        return f"{result['errors']} of {result['requests']} requests did not answer 200."
    if result["ok"]:
        return None
    return (
        f"The API served {result['requests_per_s']:.0f} requests/s "
        f"(target >= {result['target_requests_per_s']:.0f}/s) at "
        f"{result['server_cpu_ms_per_request']} ms of server CPU per request."
    )


def print_api_report(result: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(
        title=f"API: {result['requests']} GETs at concurrency {result['concurrency']} "
        f"(server on {result['server']})"
    )
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
