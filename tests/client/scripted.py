"""Real servers the tests script byte by byte, on 127.0.0.1 in the test's own event loop:

- `scripted(handler)`: a minimal HTTP/1.1 server; `handler(request, exchange)` answers each
  request (a JSON body, a status with any body, an SSE stream with ids, or a cut
  connection), and every request is recorded;
- `Proxy`: a TCP proxy in front of any server that can cut every open connection (and
  hold new ones back) to drop a stream mid-way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from parley.wire.json_bytes import dumps


@dataclass
class Request:
    """One request as the server read it (header names in lower case)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> list[tuple[str, str]]:
        return parse_qsl(urlsplit(self.target).query)


class Exchange:
    """How a handler answers: a whole response, or a chunked stream it may cut."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.cut_off = False

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        lines = [f"HTTP/1.1 {status} Scripted", f"Content-Length: {len(body)}"]
        if content_type:
            lines.append(f"Content-Type: {content_type}")
        lines.extend(f"{k}: {v}" for k, v in (headers or {}).items())
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()

    async def json(self, status: int, value: Any, headers: Mapping[str, str] | None = None) -> None:
        await self.respond(status, dumps(value), headers=headers)

    async def start_stream(self, content_type: str = "text/event-stream") -> None:
        head = (
            f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        self.writer.write(head.encode())
        await self.writer.drain()

    async def chunk(self, data: bytes) -> None:
        self.writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await self.writer.drain()

    async def event(
        self, data: Any, *, event_id: str | None = None, event: str | None = None
    ) -> None:
        """One SSE event whose data is `data` as JSON."""
        lines = []
        if event_id is not None:
            lines.append(f"id: {event_id}")
        if event is not None:
            lines.append(f"event: {event}")
        lines.append("data: " + dumps(data).decode())
        await self.chunk(("\n".join(lines) + "\n\n").encode())

    async def finish(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()

    def cut(self) -> None:
        """Drop the connection now (an incomplete body for the client)."""
        self.cut_off = True
        self.writer.transport.abort()


Handler = Callable[[Request, Exchange], Awaitable[None]]


@dataclass
class Scripted:
    """The running server: its URL and every request it received, in order."""

    url: str
    requests: list[Request] = field(default_factory=list)


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    first, *lines = head.decode("latin-1").split("\r\n")
    method, target, _ = first.split(" ", 2)
    headers = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Request(method, target, headers, body)


@contextlib.asynccontextmanager
async def scripted(handler: Handler) -> AsyncIterator[Scripted]:
    """Serve `handler` until the block ends (keep-alive connections, one request at a time)."""
    server_info: list[Scripted] = []
    handlers: set[asyncio.Task[Any]] = set()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        exchange = Exchange(writer)
        _own(handlers)
        try:
            while not exchange.cut_off:
                request = await _read_request(reader)
                if request is None:
                    break
                server_info[0].requests.append(request)
                await handler(request, exchange)
        except (ConnectionError, asyncio.CancelledError):
            pass  # the client left, or the server stops
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server_info.append(Scripted(f"http://127.0.0.1:{port}"))
    try:
        yield server_info[0]
    finally:
        server.close()
        await _stop(handlers)
        await server.wait_closed()


def _own(handlers: set[asyncio.Task[Any]]) -> None:
    """Track the current connection handler, so that stopping the server ends it."""
    task = asyncio.current_task()
    assert task is not None
    handlers.add(task)
    task.add_done_callback(handlers.discard)


async def _stop(handlers: set[asyncio.Task[Any]]) -> None:
    for task in list(handlers):
        task.cancel()
    await asyncio.gather(*handlers, return_exceptions=True)


class Proxy:
    """A TCP proxy to `target` (host:port URL). `cut()` aborts every open connection; with
    `hold`, new connections then wait until `release()`."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.url = ""
        self.connections = 0
        self._open: set[asyncio.StreamWriter] = set()
        self._released = asyncio.Event()
        self._released.set()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[Any]] = set()

    async def __aenter__(self) -> Proxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cut()
        self.release()
        assert self._server is not None
        self._server.close()
        await _stop(self._handlers)
        await self._server.wait_closed()

    def cut(self, *, hold: bool = False) -> None:
        if hold:
            self._released.clear()
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    def hold(self) -> None:
        """New connections wait (until `release`); open ones carry on."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _own(self._handlers)
        await self._released.wait()
        self.connections += 1
        upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)
        self._open.update({writer, upstream_writer})

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, RuntimeError):
                pass
            finally:
                sink.close()

        try:
            await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))
        except asyncio.CancelledError:
            pass  # the proxy stops
        finally:
            self._open.discard(writer)
            self._open.discard(upstream_writer)
