"""The gRPC transport (needs the grpc extra): each operation is a call of the version's
`A2AService`, its method named by the operations table, its request and answer the
protobuf codec's messages; streams are server streams, ended early by cancelling the call.

Addresses: a bare `host:port` (what cards of both versions list) and `grpc://host:port`
(older Parley servers' 0.3 cards) dial in plaintext, as do `http://` URLs; `grpcs://` and
`https://` use TLS with the system's roots, or the `credentials` given (which also turn
TLS on for the other forms). One channel per transport, opened on the first call (in the
caller's event loop), closed with the transport. Calls do not wait for the server to
become ready: an unreachable server fails at once (`UNAVAILABLE`, ClientConnectionError),
and retries are the client's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

try:
    import grpc
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("gRPC needs the grpc extra: pip install 'parley-a2a[grpc]'") from exc

from parley.client.auth import Auth
from parley.client.errors import StreamIdleError
from parley.client.grpc_errors import error_of
from parley.client.http import DEFAULT_MAX_RESPONSE_BYTES, decoding
from parley.client.transport import BaseTransport, CallOptions
from parley.model import Model, StreamEvent
from parley.protocol.negotiation import EXTENSIONS_HEADERS, VERSION_HEADER, Version
from parley.protocol.operations import GRPC_SERVICES, OPERATIONS, Operation
from parley.wire.codec_table import GRPC
from parley.wire.protobuf import Proto, parse

Metadata = tuple[tuple[str, str], ...]

_PLAIN = {"grpc": None, "http": 80}
_TLS = {"grpcs": None, "https": 443}
"""The URL schemes of a gRPC interface, with the port an address without one gets
(None: gRPC's own default)."""


def target_of(url: str) -> tuple[str, bool]:
    """The channel target of an interface URL, and whether it asks for TLS.

    A URL may name a scheme, a host and a port, nothing else (a gRPC service has no path):
    anything else is a ValueError.
    """
    if "://" not in url:
        return url.rstrip("/"), False
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _PLAIN and scheme not in _TLS:
        raise ValueError(f"Not a gRPC address: {url!r} (scheme {scheme!r})")
    if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.username:
        raise ValueError(f"Not a gRPC address: {url!r} (expected scheme://host:port)")
    target = parts.netloc
    default = _PLAIN.get(scheme) or _TLS.get(scheme)
    if parts.port is None and default is not None:
        target = f"{target}:{default}"
    return target, scheme in _TLS


class GrpcTransport(BaseTransport):
    """gRPC to one interface address, in one protocol version.

    `auth` and `headers` become every call's metadata (keys in lower case);
    `credentials`: the channel's TLS credentials (client certificates, private roots);
    `max_response_bytes` bounds each message received.
    """

    def __init__(
        self,
        url: str,
        version: Version = Version.V1_0,
        *,
        auth: Auth | None = None,
        headers: Mapping[str, str] | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = url
        self.target, secure = target_of(url)
        self.credentials = credentials
        if secure and credentials is None:
            self.credentials = grpc.ssl_channel_credentials()
        self.auth = auth
        self.headers = {name.lower(): value for name, value in (headers or {}).items()}
        self.codec = GRPC[version]
        self._version = version
        self._options = [("grpc.max_receive_message_length", max_response_bytes)]
        self._channel: grpc.aio.Channel | None = None

    @property
    def version(self) -> Version:
        return self._version

    @property
    def channel(self) -> grpc.aio.Channel:
        """The channel, opened on first use."""
        if self._channel is None:
            if self.credentials is None:
                self._channel = grpc.aio.insecure_channel(self.target, options=self._options)
            else:
                self._channel = grpc.aio.secure_channel(
                    self.target, self.credentials, options=self._options
                )
        return self._channel

    async def metadata(self, options: CallOptions) -> Metadata:
        """`a2a-version`, the version's extensions key, the transport's and the call's
        headers, then credentials (each may override)."""
        values = {VERSION_HEADER.lower(): self._version.value}
        if options.extensions:
            values[EXTENSIONS_HEADERS[self._version].lower()] = ", ".join(options.extensions)
        values.update(self.headers)
        values.update((name.lower(), value) for name, value in options.headers.items())
        if self.auth is not None:
            credentials = await self.auth.headers()
            values.update((name.lower(), value) for name, value in credentials.items())
        return tuple(values.items())

    def method(self, operation: Operation) -> str:
        """The full method name (`/lf.a2a.v1.A2AService/GetTask`)."""
        self.codec.request_type(operation)  # MethodNotFoundError if the version lacks it
        binding = OPERATIONS[operation].bindings[self._version]
        return f"/{GRPC_SERVICES[self._version]}/{binding.grpc_method}"

    def request_bytes(self, operation: Operation, request: Model) -> bytes:
        data: bytes = self.codec.encode_request(operation, request).SerializeToString()
        return data

    def answer_type(self, operation: Operation) -> type[Proto]:
        schema = self.codec.schema
        if operation is Operation.SEND_MESSAGE:
            return schema.send_response
        return schema.responses.get(operation, schema.stream_response)

    async def unary(self, operation: Operation, request: Model, options: CallOptions) -> Any:
        method = self.method(operation)
        data = self.request_bytes(operation, request)
        metadata = await self.metadata(options)
        call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self.channel.unary_unary(method)
        try:
            answer = await call(data, metadata=metadata, timeout=options.timeout)
        except grpc.aio.AioRpcError as exc:
            raise error_of(exc, operation.value, options.timeout) from exc
        what = f"{operation.value} result"
        with decoding(what):
            return self.codec.decode_response(operation, parse(self.answer_type(operation), answer))

    def stream(self, operation: Operation, request: Model, options: CallOptions) -> GrpcEventStream:
        return GrpcEventStream(self, operation, request, options)

    async def aclose(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            await channel.close()


class GrpcEventStream:
    """An EventStream over one server-streaming call, started on the first `__anext__`.

    gRPC events carry no ids (`last_event_id` is always ""): a resubscription cannot
    resume, and the client says so with `Reconnected`. `options.idle_timeout` bounds the
    wait for each message (StreamIdleError); `aclose` cancels the call.
    """

    def __init__(
        self, transport: GrpcTransport, operation: Operation, request: Model, options: CallOptions
    ) -> None:
        self._transport = transport
        self._operation = operation
        self._request = request
        self._idle = options.idle_timeout
        self._options = options
        self._call: grpc.aio.UnaryStreamCall[bytes, bytes] | None = None
        self._closed = False

    @property
    def last_event_id(self) -> str:
        return ""

    def __aiter__(self) -> GrpcEventStream:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._closed:
            raise StopAsyncIteration
        try:
            call = self._call or await self._open()
            message = await self._read(call)
            if message is None:
                raise StopAsyncIteration
            with decoding(f"{self._operation.value} event"):
                kind = self._transport.codec.schema.stream_response
                return self._transport.codec.decode_event(parse(kind, message))
        except BaseException:
            await self.aclose()
            raise

    async def _open(self) -> grpc.aio.UnaryStreamCall[bytes, bytes]:
        transport = self._transport
        method = transport.method(self._operation)
        data = transport.request_bytes(self._operation, self._request)
        metadata = await transport.metadata(self._options)
        start: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = transport.channel.unary_stream(
            method
        )
        self._call = start(data, metadata=metadata)
        return self._call

    async def _read(self, call: grpc.aio.UnaryStreamCall[bytes, bytes]) -> bytes | None:
        """The next message; None at the end of the stream."""
        what = self._operation.value
        try:
            async with asyncio.timeout(self._idle):
                message = await call.read()
        except TimeoutError as exc:
            raise StreamIdleError(f"{what}: nothing received for {self._idle} s") from exc
        except grpc.aio.AioRpcError as exc:
            raise error_of(exc, what, None) from exc
        return message if isinstance(message, bytes) else None  # else EOF

    async def aclose(self) -> None:
        self._closed = True
        call, self._call = self._call, None
        if call is not None:
            call.cancel()
