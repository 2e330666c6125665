"""A round-robin HTTP/1.1 proxy for the multi-replica rig: each request goes to the next
backend, so consecutive requests of one client land on different replicas. Streams (SSE)
pass through as they come. Each request is sent on a connection of its own and the
client's connection is closed after the answer (HTTP/1.1 clients open another).
`GrpcRoundRobin` does the same for gRPC: each call to the next backend, its messages,
status, details and metadata passed through.

    python -m tests.replicas.proxy 8000 http://127.0.0.1:8001 http://127.0.0.1:8002 ...

Loopback only; a test fixture, not a production balancer (see docs/deploy.md for those).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Any, NoReturn
from urllib.parse import urlsplit

import grpc

from parley.protocol.operations import OPERATIONS

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
        self._serving: set[asyncio.Task[None]] = set()

    async def start(self, port: int = 0, sock: socket.socket | None = None) -> int:
        if sock is not None:  # a socket reserved before (its port is in a card)
            self.server = await asyncio.start_server(self._serve, sock=sock)
        else:
            self.server = await asyncio.start_server(self._serve, HOST, port)
        bound: int = self.server.sockets[0].getsockname()[1]
        return bound

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            for serving in list(self._serving):
                serving.cancel()
            await asyncio.gather(*self._serving, return_exceptions=True)
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        current = asyncio.current_task()
        assert current is not None
        self._serving.add(current)  # held until done (and cancelled by `stop`)
        try:
            await self._relay(reader, writer)
        finally:
            self._serving.discard(current)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_writer: asyncio.StreamWriter | None = None
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
            pump = asyncio.ensure_future(_pump(upstream_reader, writer))
            gone = asyncio.ensure_future(reader.read(1))  # the client hung up (a stream left)
            try:
                await asyncio.wait({pump, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:  # (cancelled too: by `stop`)
                for each in (pump, gone):
                    each.cancel()
                await asyncio.gather(pump, gone, return_exceptions=True)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            for side in (upstream_writer, writer):
                if side is not None:
                    side.close()
                    with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                        await side.wait_closed()


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()


STREAMING = frozenset(
    binding.grpc_method
    for spec in OPERATIONS.values()
    if spec.streaming
    for binding in spec.bindings.values()
)
"""The A2A gRPC methods, in every version, that answer with a stream (the others answer
once)."""


class GrpcRoundRobin:
    """gRPC calls, each to the next backend ("host:port") in turn."""

    def __init__(self, backends: Sequence[str]) -> None:
        self.backends = list(backends)
        self._next = itertools.cycle(range(len(self.backends)))
        self.counts = [0] * len(self.backends)
        self._channels: list[grpc.aio.Channel] = []
        self._server: grpc.aio.Server | None = None

    async def start(self) -> int:
        self._channels = [grpc.aio.insecure_channel(backend) for backend in self.backends]
        server = grpc.aio.server()
        server.add_generic_rpc_handlers([_Forward(self)])
        port = server.add_insecure_port(f"{HOST}:0")
        await server.start()
        self._server = server
        return port

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(0)
        for channel in self._channels:
            await channel.close()

    def channel(self) -> grpc.aio.Channel:
        number = next(self._next)
        self.counts[number] += 1
        return self._channels[number]

    async def unary(self, method: str, request: bytes, context: Any) -> bytes:
        unary: Any = self.channel().unary_unary(method)
        call = unary(request, metadata=_metadata(context))
        try:
            response: bytes = await call
        except grpc.aio.AioRpcError as error:
            await _relay_error(context, error)
        await context.send_initial_metadata(tuple(await call.initial_metadata()))
        context.set_trailing_metadata(tuple(await call.trailing_metadata()))
        return response

    async def stream(self, method: str, request: bytes, context: Any) -> AsyncIterator[bytes]:
        stream: Any = self.channel().unary_stream(method)
        call = stream(request, metadata=_metadata(context))
        try:
            started = False
            async for item in call:
                if not started:
                    started = True
                    await context.send_initial_metadata(tuple(await call.initial_metadata()))
                yield item
        except grpc.aio.AioRpcError as error:
            await _relay_error(context, error)
        finally:
            call.cancel()
        context.set_trailing_metadata(tuple(await call.trailing_metadata()))


class _Forward(grpc.GenericRpcHandler):
    def __init__(self, proxy: GrpcRoundRobin) -> None:
        self.proxy = proxy

    def service(self, details: Any) -> Any:
        method: str = details.method
        if method.rsplit("/", 1)[-1] in STREAMING:
            return grpc.unary_stream_rpc_method_handler(partial(self.proxy.stream, method))
        return grpc.unary_unary_rpc_method_handler(partial(self.proxy.unary, method))


def _metadata(context: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (key, value)
        for key, value in context.invocation_metadata() or ()
        if not key.startswith((":", "grpc-")) and key != "user-agent"
    )


async def _relay_error(context: Any, error: grpc.aio.AioRpcError) -> NoReturn:
    with contextlib.suppress(Exception):
        await context.send_initial_metadata(tuple(error.initial_metadata() or ()))
    trailing = tuple(error.trailing_metadata() or ())
    await context.abort(error.code(), error.details() or "", trailing)
    raise AssertionError("abort returned")  # it raises


async def _main(port: int, backends: Sequence[str]) -> None:
    proxy = RoundRobin(backends)
    await proxy.start(port)
    print(f"round-robin on http://{HOST}:{port} to {', '.join(backends)}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_main(int(sys.argv[1]), sys.argv[2:]))
