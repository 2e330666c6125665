"""The load clients of the server benchmark that wrk cannot be: a bare asyncio HTTP/1.1
client (no httpx overhead in the figures), run by `benchmarks.server` as a separate
process pinned to the load core. Each command prints one JSON line.

    python -m benchmarks.server_load ttfe --port P --count 200
    python -m benchmarks.server_load send --port P --count 20000 --concurrency 16
    python -m benchmarks.server_load streams --port P --count 200 --concurrency 16
    python -m benchmarks.server_load hold --port P --count 1000   # until stdin closes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable

import uvloop

HOST = "127.0.0.1"


def jsonrpc_body(method: str, skill: str | None = None) -> bytes:
    """The 1.0 JSON-RPC request every server gets (the same bytes wrk's scripts send)."""
    message: dict[str, object] = {
        "messageId": "m-1",
        "role": "ROLE_USER",
        "parts": [{"text": "hello"}],
    }
    if skill is not None:
        message["metadata"] = {"skill": skill}
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    return json.dumps(request, separators=(",", ":")).encode()


def http_request(port: int, body: bytes, headers: tuple[str, ...] = ()) -> bytes:
    """One POST of `body`, with `headers` (`Name: value` lines, e.g. credentials) added."""
    extra = "".join(f"{header}\r\n" for header in headers)
    head = (
        f"POST / HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"A2A-Version: 1.0\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class Connection:
    """One keep-alive HTTP/1.1 connection: send a request, read the response (a
    Content-Length body or a chunked one, chunk by chunk)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
        return cls(reader, writer)

    async def exchange(
        self, request: bytes, on_chunk: Callable[[bytes], None] | None = None
    ) -> tuple[int, bytes]:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
            if on_chunk is not None:
                on_chunk(body)
            return status, body
        if headers.get("transfer-encoding", "").lower() != "chunked":
            raise RuntimeError(f"unsupported response framing: {headers}")
        parts: list[bytes] = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return status, b"".join(parts)
            chunk = (await self.reader.readexactly(size + 2))[:-2]
            parts.append(chunk)
            if on_chunk is not None:
                on_chunk(chunk)

    def close(self) -> None:
        self.writer.close()


def _has_event(data: bytes | bytearray) -> bool:
    """A complete SSE event is in `data` (events end with a blank line: LF or CRLF)."""
    return b"\n\n" in data or b"\r\n\r\n" in data


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def time_to_first_event(port: int, count: int) -> dict[str, object]:
    """`count` streams, one after the other on one connection: the time from sending the
    request to the first complete SSE event, and to the end of the stream."""
    request = http_request(port, jsonrpc_body("SendStreamingMessage", "stream"))
    connection = await Connection.open(port)
    firsts, totals, events = [], [], 0
    for _ in range(count):
        seen = bytearray()
        first: list[float] = []
        start = time.perf_counter()

        def on_chunk(chunk: bytes, seen: bytearray = seen, first: list[float] = first) -> None:
            seen.extend(chunk)
            if not first and _has_event(seen):
                first.append(time.perf_counter())

        status, body = await connection.exchange(request, on_chunk)
        end = time.perf_counter()
        if status != 200 or not first:
            raise RuntimeError(f"stream failed: HTTP {status} {body[:200]!r}")
        firsts.append((first[0] - start) * 1000)
        totals.append((end - start) * 1000)
        events = body.count(b"data:")
    connection.close()
    return {
        "ttfe_ms_p50": statistics.median(firsts),
        "ttfe_ms_p99": _percentile(firsts, 0.99),
        "stream_ms_p50": statistics.median(totals),
        "events_per_stream": events,
        "count": count,
    }


async def send_many(
    port: int, count: int, concurrency: int, headers: tuple[str, ...] = ()
) -> dict[str, object]:
    """`count` blocking SendMessage calls over `concurrency` keep-alive connections."""
    request = http_request(port, jsonrpc_body("SendMessage"), headers)
    remaining = count
    failures = 0

    async def worker() -> None:
        nonlocal remaining, failures
        connection = await Connection.open(port)
        while remaining > 0:
            remaining -= 1
            status, body = await connection.exchange(request)
            if status != 200 or b'"result"' not in body:
                failures += 1
        connection.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - start
    return {"sent": count, "failures": failures, "seconds": seconds, "rps": count / seconds}


async def stream_many(port: int, count: int, concurrency: int) -> dict[str, object]:
    """`count` streaming sends (the `stream` skill) over `concurrency` keep-alive
    connections, each read to its end: SSE events per second."""
    request = http_request(port, jsonrpc_body("SendStreamingMessage", "stream"))
    remaining = count
    events = 0

    def on_chunk(chunk: bytes) -> None:
        nonlocal events
        events += chunk.count(b"data:")

    async def worker() -> None:
        nonlocal remaining
        connection = await Connection.open(port)
        while remaining > 0:
            remaining -= 1
            await connection.exchange(request, on_chunk)
        connection.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - start
    return {"streams": count, "events": events, "seconds": seconds, "eps": events / seconds}


async def hold_streams(port: int, count: int, batch: int = 100) -> None:
    """Open `count` streams on the `wait` skill, each read up to its first event; report,
    then hold them all open until stdin closes."""
    request = http_request(port, jsonrpc_body("SendStreamingMessage", "wait"))

    async def open_one() -> asyncio.StreamWriter:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"stream refused: {head[:100]!r}")
        seen = b""
        while not _has_event(seen):  # the first SSE event: the stream is set up
            chunk = await reader.read(65536)
            if not chunk:
                raise RuntimeError("stream closed before its first event")
            seen += chunk
        return writer

    start = time.perf_counter()
    writers: list[asyncio.StreamWriter] = []
    for offset in range(0, count, batch):
        size = min(batch, count - offset)
        writers += await asyncio.wait_for(
            asyncio.gather(*(open_one() for _ in range(size))), timeout=120
        )
    print(json.dumps({"open": len(writers), "seconds": time.perf_counter() - start}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for writer in writers:
        writer.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=("ttfe", "send", "streams", "hold"))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--header", action="append", default=[], help="add `Name: value` to each send"
    )
    args = parser.parse_args(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    if args.command == "ttfe":
        print(json.dumps(uvloop.run(time_to_first_event(args.port, args.count))))
    elif args.command == "send":
        sent = send_many(args.port, args.count, args.concurrency, tuple(args.header))
        print(json.dumps(uvloop.run(sent)))
    elif args.command == "streams":
        print(json.dumps(uvloop.run(stream_many(args.port, args.count, args.concurrency))))
    else:
        uvloop.run(hold_streams(args.port, args.count))


if __name__ == "__main__":
    main()
