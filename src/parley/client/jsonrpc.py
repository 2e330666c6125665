"""The JSON-RPC transport: each operation is a JSON-RPC 2.0 call POSTed to the interface URL,
its method named by the operations table for the transport's version; streams are SSE whose
`data` lines are JSON-RPC responses (of any event name, REFERENCE §7.1).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import httpx

from parley.client.auth import Auth
from parley.client.errors import ClientError, ClientProtocolError
from parley.client.http import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RESPONSE_BYTES,
    HttpChannel,
    Reply,
    SSEEventStream,
    decoding,
    parse_json,
    unexpected,
)
from parley.client.transport import BaseTransport, CallOptions, EventStream
from parley.model import Model, StreamEvent
from parley.protocol.errors import A2AError, MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire import jsonrpc, sse
from parley.wire.codec_table import JSONRPC
from parley.wire.errors import from_jsonrpc_error
from parley.wire.json_bytes import JSON, dumps


def read_envelope(value: JSON, request_id: int, status: int) -> JSON:
    """The `result` of a JSON-RPC response, or raise the A2A error it carries.

    A response with another (non-null) id is not ours: ClientProtocolError (`true` is no
    id, though Python holds it equal to 1). A missing `result` is read as null, which only
    an empty result (a deleted config) accepts.
    """
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        raise ClientProtocolError("Not a JSON-RPC 2.0 response", status_code=status)
    if "error" in value:
        raise from_jsonrpc_error(value["error"])
    answered = value.get("id")
    if answered is not None and (isinstance(answered, bool) or answered != request_id):
        raise ClientProtocolError(
            f"JSON-RPC response id {answered!r} does not match the request's {request_id}",
            status_code=status,
        )
    return value.get("result")  # absent: null (the SDK's 0.3 server drops a null result)


class JsonRpcTransport(BaseTransport):
    """JSON-RPC over HTTP to one interface URL, in one protocol version.

    `http`: an httpx client to share (the caller closes it); by default the transport
    makes and closes its own. `auth` adds credentials to every request.
    """

    def __init__(
        self,
        url: str,
        version: Version = Version.V1_0,
        *,
        http: httpx.AsyncClient | None = None,
        auth: Auth | None = None,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = url
        self.channel = HttpChannel(
            version,
            http=http,
            auth=auth,
            headers=headers,
            connect_timeout=connect_timeout,
            max_response_bytes=max_response_bytes,
        )
        self.codec = JSONRPC[version]
        self._ids = itertools.count(1)

    @property
    def version(self) -> Version:
        return self.channel.version

    def _body(self, operation: Operation, request: Model, request_id: int) -> bytes:
        binding = OPERATIONS[operation].bindings.get(self.version)
        if binding is None:
            raise MethodNotFoundError(
                f"{operation.value} does not exist in A2A {self.version.value}",
                metadata={"method": operation.value},
            )
        params = self.codec.encode_request(operation, request)
        return dumps(jsonrpc.request(binding.jsonrpc_method, params, request_id))

    def _result(self, reply: Reply, request_id: int) -> JSON:
        try:
            value = parse_json(reply.body, self.channel.limits, "JSON-RPC response", reply.status)
        except ClientProtocolError:
            raise unexpected(reply, "JSON-RPC answer") from None
        if reply.status != 200 and not (isinstance(value, dict) and "error" in value):
            raise unexpected(reply, "JSON-RPC answer")
        return read_envelope(value, request_id, reply.status)

    async def unary(self, operation: Operation, request: Model, options: CallOptions) -> Any:
        request_id = next(self._ids)
        body = self._body(operation, request, request_id)
        reply = await self.channel.call("POST", self.url, options, body=body)
        result = self._result(reply, request_id)
        with decoding(f"{operation.value} result"):
            return self.codec.decode_response(operation, result)

    def stream(self, operation: Operation, request: Model, options: CallOptions) -> EventStream:
        request_id = next(self._ids)

        async def build(attempt: int) -> httpx.Request | None:
            if attempt:
                return None  # one URL, one verb: no alternative
            body = self._body(operation, request, request_id)
            return await self.channel.build(
                "POST", self.url, options, accept=sse.MEDIA_TYPE, body=body
            )

        def decode(event: sse.SSEEvent) -> StreamEvent:
            value = parse_json(event.data, self.channel.limits, "stream event")
            result = read_envelope(value, request_id, 200)
            with decoding(f"{operation.value} event"):
                return self.codec.decode_event(result)

        def fail(reply: Reply) -> Exception:
            try:
                self._result(reply, request_id)
            except (A2AError, ClientError) as exc:
                return exc
            return ClientProtocolError(
                "Expected an event stream, got a single JSON-RPC result", status_code=reply.status
            )

        return SSEEventStream(self.channel, build, options, decode, fail)

    async def aclose(self) -> None:
        await self.channel.aclose()
