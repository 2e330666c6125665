"""A real webhook receiver for the delivery tests: an asyncio HTTP/1.1 server on 127.0.0.1
that records every request (headers, body, when it came, when its connection closed) and
answers from a script of `Reply`s: a status and body, after a delay or an event, or
misbehaving (garbage bytes, a huge or endless body, no answer at all)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Reply:
    """One scripted answer (a 200 with no body by default)."""

    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    """Seconds to wait before answering."""
    gate: asyncio.Event | None = None
    """Answer only once this is set."""
    raw: bytes | None = None
    """Send these bytes instead of an HTTP answer, then close (or hang)."""
    hang: bool = False
    """Never answer (after `raw`, if any): wait until the client gives up."""
    size: int = 0
    """A body of this many bytes (Content-Length), sent slowly, `chunk` bytes at a time."""
    endless: bool = False
    """A chunked body that never ends."""
    chunk: int = 16384
    pause: float = 0.005
    """Seconds between two chunks of a `size` or `endless` body."""


@dataclass
class Request:
    """One request as received, and what happened to its connection."""

    method: str
    target: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes
    at: float
    """`time.monotonic()` when the request was read."""
    reply: Reply
    opened: float
    """When its connection was accepted."""
    closed: float | None = None
    """When its connection was closed (by either side)."""
    sent: int = 0
    """Body bytes written back."""

    @property
    def id(self) -> str:
        return self.headers.get("webhook-id", "")

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def kind(self) -> str:
        """The A2A 1.0 StreamResponse member the body carries (task, statusUpdate, ...)."""
        document = self.json()
        assert isinstance(document, dict)
        assert len(document) == 1, document
        return str(next(iter(document)))


class Receiver:
    """`async with Receiver([Reply(503), Reply(200)]) as receiver:` then POST to
    `receiver.url()`. Replies are used in order, then `default`; tests may change both
    while it runs. `stop()` closes the port (and every open connection), `start()` opens
    it again on the same port."""

    def __init__(
        self, script: Iterable[Reply] = (), *, default: Reply | None = None, port: int = 0
    ) -> None:
        self.script = list(script)
        self.default = default or Reply()
        self.port = port
        self.requests: list[Request] = []
        self.connections = 0
        self.open = 0
        """Connections accepted and not closed yet."""
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()

    def url(self, path: str = "/hook") -> str:
        assert self.port, "start the receiver first (or give it a port)"
        return f"http://{HOST}:{self.port}{path}"

    async def __aenter__(self) -> Receiver:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, HOST, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        handlers = list(self._handlers)
        for handler in handlers:
            handler.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    # ------------------------------------------------------------------- what was received

    @property
    def ids(self) -> list[str]:
        """The `webhook-id` of each request, in the order received (retries repeated)."""
        return [request.id for request in self.requests]

    def answered(self, status: int = 200) -> list[Request]:
        """The requests that got an HTTP answer with `status`."""
        return [
            r
            for r in self.requests
            if r.reply.status == status and r.reply.raw is None and not r.reply.hang
        ]

    # ------------------------------------------------------------------- serving

    def _next_reply(self) -> Reply:
        return self.script.pop(0) if self.script else self.default

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)
        self._writers.add(writer)
        self.connections += 1
        self.open += 1
        opened = time.monotonic()
        mine: list[Request] = []
        try:
            await self._serve(reader, writer, opened, mine)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()
            closed = time.monotonic()
            for request in mine:
                if request.closed is None:
                    request.closed = closed
            self.open -= 1
            self._handlers.discard(handler)

    async def _serve(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        opened: float,
        mine: list[Request],
    ) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return  # the client closed the connection
            first, *lines = head.decode("latin-1").split("\r\n")
            method, target, _ = first.split(" ", 2)
            headers = {}
            for line in lines:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            reply = self._next_reply()
            request = Request(method, target, headers, body, time.monotonic(), reply, opened)
            self.requests.append(request)
            mine.append(request)
            if not await self._answer(reader, writer, reply, request):
                return

    @staticmethod
    async def _endless(writer: asyncio.StreamWriter, reply: Reply, request: Request) -> None:
        """A chunked body, until the client closes the connection."""
        writer.write(f"HTTP/1.1 {reply.status} X\r\ntransfer-encoding: chunked\r\n\r\n".encode())
        block = f"{reply.chunk:x}\r\n".encode() + b"x" * reply.chunk + b"\r\n"
        while not writer.is_closing():
            writer.write(block)
            request.sent += reply.chunk
            await writer.drain()
            await asyncio.sleep(reply.pause)

    async def _answer(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        reply: Reply,
        request: Request,
    ) -> bool:
        """Answer one request; whether the connection may carry another."""
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.gate is not None:
            await reply.gate.wait()
        if reply.raw is not None:
            writer.write(reply.raw)
            await writer.drain()
        if reply.hang:
            await reader.read()  # until the client closes
            return False
        if reply.raw is not None:
            return False
        if reply.endless:
            await self._endless(writer, reply, request)
            return False
        if reply.size:
            writer.write(
                f"HTTP/1.1 {reply.status} X\r\ncontent-length: {reply.size}\r\n\r\n".encode()
            )
            while request.sent < reply.size:
                writer.write(b"x" * min(reply.chunk, reply.size - request.sent))
                request.sent += min(reply.chunk, reply.size - request.sent)
                await writer.drain()
                await asyncio.sleep(reply.pause)
            return False
        writer.write(
            f"HTTP/1.1 {reply.status} X\r\ncontent-length: {len(reply.body)}\r\n\r\n".encode()
            + reply.body
        )
        request.sent = len(reply.body)
        await writer.drain()
        return True


Condition = Callable[[], bool | Awaitable[bool]]


async def eventually(
    condition: Condition,
    timeout: float = 5.0,
    what: str = "",
) -> float:
    """Wait until `condition()` holds (polling every 10 ms), failing after `timeout`
    seconds (generous: only a failing test waits that long); how long it took."""
    start = time.monotonic()
    while True:
        held = condition()
        if not isinstance(held, bool):
            held = await held
        if held:
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout} s: {what or condition}")
        await asyncio.sleep(0.01)


__all__ = ["HOST", "Condition", "Receiver", "Reply", "Request", "eventually"]
