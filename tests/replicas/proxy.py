"""A round-robin HTTP/1.1 proxy for the multi-replica rig: each request goes to the next
backend, so consecutive requests of one client land on different replicas. Streams (SSE)
pass through as they come. Each request is sent on a connection of its own and the
client's connection is closed after the answer (HTTP/1.1 clients open another).

    python -m tests.replicas.proxy 8000 http://127.0.0.1:8001 http://127.0.0.1:8002 ...

Loopback only; a test fixture, not a production balancer (see docs/deploy.md for those).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

HOST = "127.0.0.1"
MAX_HEAD = 65536


class RoundRobin:
    def __init__(self, backends: Sequence[str]) -> None:
        self.backends = [
            (urlsplit(url).hostname or HOST, urlsplit(url).port or 80) for url in backends
        ]
        self._next = itertools.cycle(range(len(self.backends)))
        self.counts = [0] * len(self.backends)
        self.server: asyncio.Server | None = None

    async def start(self, port: int = 0) -> int:
        self.server = await asyncio.start_server(self._serve, HOST, port)
        bound: int = self.server.sockets[0].getsockname()[1]
        return bound

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if len(head) > MAX_HEAD:
                return
            lines = head.split(b"\r\n")
            length = 0
            kept = [lines[0]]
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                lowered = name.strip().lower()
                if lowered == b"content-length":
                    length = int(value)
                if lowered in (b"connection", b"keep-alive") or not line:
                    continue
                kept.append(line)
            body = await reader.readexactly(length)
            number = next(self._next)
            self.counts[number] += 1
            host, port = self.backends[number]
            upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
            upstream_writer.write(b"\r\n".join([*kept, b"Connection: close", b"", b""]) + body)
            await upstream_writer.drain()
            while chunk := await upstream_reader.read(65536):
                writer.write(chunk)
                await writer.drain()
            upstream_writer.close()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


async def _main(port: int, backends: Sequence[str]) -> None:
    proxy = RoundRobin(backends)
    await proxy.start(port)
    print(f"round-robin on http://{HOST}:{port} to {', '.join(backends)}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_main(int(sys.argv[1]), sys.argv[2:]))
