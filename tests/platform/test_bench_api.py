"""`casework bench api` end to end on a small run: a real server, both routes answered, no errors;
and the lean client's HTTP/1.1 parsing on a local socket.

Throughput is measured by `make bench`, not asserted here.
"""

from __future__ import annotations

import asyncio

from casework.bench.api import (
    REVIEW_ITEMS,
    ROUTES,
    _Connection,
    _server_stack,
    check_api_bench,
    run_api_bench,
)


def test_small_api_bench_run():
    result = run_api_bench(requests=40, concurrency=4, target=1e9)
    assert result["routes"] == list(ROUTES) == ["/receipts/receipts", "/receipts/review"]
    assert (result["requests"], result["concurrency"], result["errors"]) == (40, 4, 0)
    assert result["review_queue"] == REVIEW_ITEMS
    assert result["server"] == "uvloop httptools" and _server_stack() == [
        "--loop",
        "uvloop",
        "--http",
        "httptools",
    ]
    assert result["ok"] is False  # nobody serves 10^9 requests a second
    assert 0 < result["p50_ms"] <= result["p99_ms"]
    assert result["server_cpu_ms_per_request"] is None or result["server_cpu_ms_per_request"] > 0
    assert check_api_bench(result) == (
        f"The API served {result['requests_per_s']:.0f} requests/s (target >= 1000000000/s) "
        f"at {result['server_cpu_ms_per_request']} ms of server CPU per request."
    )
    assert check_api_bench({**result, "ok": True}) is None
    assert check_api_bench({**result, "errors": 3}) == "3 of 40 requests did not answer 200."


def test_the_client_reads_sized_and_chunked_answers_on_one_connection():
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-type: text/plain\r\n\r\nhello",
        b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\n\r\n",
        b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 2\r\n\r\n{}",
    ]
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in answers:
            seen.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(answer)
            await writer.drain()
        writer.close()

    async def main() -> list[int]:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = await _Connection.open(port)
        try:
            return [await conn.get(f"GET /{i} HTTP/1.1\r\n\r\n".encode()) for i in range(3)]
        finally:
            conn.close()
            server.close()

    assert asyncio.run(main()) == [200, 404, 401]
    assert seen == [f"GET /{i} HTTP/1.1\r\n\r\n".encode() for i in range(3)]
