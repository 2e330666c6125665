"""Raw gRPC exchanges with one gRPC interface of the agent under check (the grpc extra):
an operation of the operations table called as the version's `A2AService` method, and
the answer kept as the server sent it — the status code, its message and its
`google.rpc` details, or the response message itself — in the same `Answer` and
`StreamAnswer` the HTTP exchanges fill, so every check runs on gRPC unchanged.

An error answer's `error` is shaped as a 1.0 HTTP+JSON error body (`{"error": {"status",
"message", "details"}}`), the details as ProtoJSON with their `@type`."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx

from parley.client.grpc import GrpcTransport
from parley.client.grpc_errors import details_of
from parley.conformance.exchange import Answer, StreamAnswer
from parley.conformance.results import CheckFailedError
from parley.model import Model
from parley.protocol.negotiation import VERSION_HEADER, Version
from parley.protocol.operations import Operation
from parley.wire.codec_seam import Codec
from parley.wire.protobuf import parse, to_json

CONTENT_TYPE = "application/grpc"
OK = grpc.StatusCode.OK.name
_UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def _error(exc: grpc.aio.AioRpcError) -> dict[str, Any]:
    status = {"status": exc.code().name, "message": exc.details() or ""}
    return {"error": {**status, "details": details_of(exc)}}


@dataclass(slots=True)
class GrpcSubject:
    """One gRPC interface under check; its channel opens on the first call."""

    binding: str
    version: Version
    url: str
    tenant: str = ""
    stream_seconds: float = 10.0
    _transport: GrpcTransport = field(init=False)

    def __post_init__(self) -> None:
        self._transport = GrpcTransport(self.url, self.version)

    @property
    def label(self) -> str:
        return f"{self.binding} {self.version.value} {self.url}"

    @property
    def codec(self) -> Codec[Any]:
        codec: Codec[Any] = self._transport.codec
        return codec

    def _metadata(
        self, version_header: str | None, headers: dict[str, str] | None
    ) -> tuple[tuple[str, str], ...]:
        values = {VERSION_HEADER.lower(): version_header or self.version.value}
        values.update((name.lower(), value) for name, value in (headers or {}).items())
        return tuple(values.items())

    def _start(self, operation: Operation, request: Model) -> tuple[str, bytes]:
        return self._transport.method(operation), self._transport.request_bytes(operation, request)

    async def call(
        self,
        operation: Operation,
        request: Model,
        *,
        version_header: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        method, data = self._start(operation, request)
        unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self._transport.channel.unary_unary(
            method
        )
        metadata = self._metadata(version_header, headers)
        try:
            reply = await unary(data, metadata=metadata, timeout=self.stream_seconds)
        except grpc.aio.AioRpcError as exc:
            if exc.code() in _UNREACHABLE:
                raise CheckFailedError(f"gRPC {exc.code().name}: {exc.details()}") from exc
            body = _error(exc)
            answer = Answer(exc.code().value[0], CONTENT_TYPE, httpx.Headers(), body=body)
            answer.error, answer.grpc_code, answer.text = body, exc.code().name, exc.details() or ""
            return answer
        message = parse(self._transport.answer_type(operation), reply)
        answer = Answer(0, CONTENT_TYPE, httpx.Headers(), body=to_json(message), result=message)
        answer.grpc_code = OK
        return answer

    async def stream(
        self,
        operation: Operation,
        request: Model,
        *,
        headers: dict[str, str] | None = None,
        max_events: int = 64,
    ) -> StreamAnswer:
        method, data = self._start(operation, request)
        start: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = (
            self._transport.channel.unary_stream(method)
        )
        call = start(data, metadata=self._metadata(None, headers))
        answer = StreamAnswer(0, CONTENT_TYPE, grpc_code=OK)
        kind = self._transport.codec.schema.stream_response
        deadline = time.monotonic() + self.stream_seconds
        try:
            while len(answer.events) < max_events:
                left = deadline - time.monotonic()
                if left <= 0:
                    return answer
                try:
                    message = await _read(call, left)
                except TimeoutError:
                    return answer
                if not isinstance(message, bytes):
                    answer.ended = True
                    return answer
                answer.events.append(parse(kind, message))
        except grpc.aio.AioRpcError as exc:
            if exc.code() in _UNREACHABLE:
                raise CheckFailedError(f"gRPC {exc.code().name}: {exc.details()}") from exc
            answer.errors.append(_error(exc))
            answer.grpc_code, answer.text = exc.code().name, exc.details() or ""
        finally:
            call.cancel()
        return answer

    def framing_problem(self, answer: StreamAnswer) -> str | None:
        """gRPC frames its own messages: only an error status breaks a stream."""
        if answer.grpc_code != OK:
            return f"gRPC {answer.grpc_code}: {answer.text[:160]}"
        return None

    def unauthenticated(self, answer: Answer) -> str | None:
        """The refusal of a call without credentials: `UNAUTHENTICATED` (None when not)."""
        code = grpc.StatusCode.UNAUTHENTICATED.name
        return f"gRPC {code}" if answer.grpc_code == code else None

    async def aclose(self) -> None:
        await self._transport.aclose()


async def _read(call: grpc.aio.UnaryStreamCall[bytes, bytes], seconds: float) -> object:
    async with asyncio.timeout(seconds):
        return await call.read()
