"""The JSON-RPC binding: one POST URL for every method of both versions; the method family
tells the version, which the `A2A-Version` header must confirm (REFERENCE §1.3).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import msgspec

from parley.asgi import streaming
from parley.asgi.calls import (
    Settings,
    admit,
    authenticate,
    call_context,
    echo_headers,
    error_headers,
    jsonrpc_status,
    open_stream,
    require_version,
    to_a2a_error,
)
from parley.asgi.http import Exchange
from parley.model import StreamEvent
from parley.protocol import generations
from parley.protocol.errors import (
    A2AError,
    MethodNotFoundError,
)
from parley.protocol.negotiation import AskedVersion, Version, ask_version
from parley.protocol.operations import JSONRPC_METHODS, OPERATIONS
from parley.server.context import ANONYMOUS_AUTHENTICATOR, ANONYMOUS_CALLER, Caller
from parley.server.handler import STREAMING, UNARY
from parley.wire import codec_table, jsonrpc, sse
from parley.wire.codec_seam import Codec
from parley.wire.codec_table import JSONRPC
from parley.wire.json_bytes import dumps, loads
from parley.wire.limits import ACTIVE


class _Reply(msgspec.Struct):
    """What an error response needs, as it becomes known: the request id and version."""

    id: jsonrpc.RequestId
    version: Version


async def serve_jsonrpc(settings: Settings, exchange: Exchange) -> None:
    """Answer one POST. Every JSON-RPC response is HTTP 200 with `application/json`
    but a refused caller's (401 with `WWW-Authenticate`, or 403: REFERENCE §6.3, before
    the body is read), or a rate-limited one's (429 with `Retry-After`). A request without
    `id` is checked like any other (method, version, params) and its error answered with
    `"id": null`, since A2A defines no notifications (every method's request has an `id`);
    one that passes is not executed and gets an empty 204."""
    asked = ask_version(exchange.request.version_header, settings.served)
    reply = _Reply(None, asked.answer)
    try:
        caller = (  # (no coroutine of `authenticate` for an app without security)
            ANONYMOUS_CALLER
            if settings.authenticator is ANONYMOUS_AUTHENTICATOR
            else await authenticate(settings, exchange)
        )
    except A2AError as err:
        body = jsonrpc.failure(None, err, reply.version)
        await exchange.respond_json(jsonrpc_status(err), body, error_headers(err))
        return
    limits = settings.limits
    token = None if limits is ACTIVE.get() else ACTIVE.set(limits)  # (`applied`, inline)
    try:
        stream = await _serve(settings, exchange, reply, caller, asked)
        if stream is not None:  # `_serve`'s frame (the body, its JSON) is gone by now
            await stream
    except A2AError as err:
        body = jsonrpc.failure(reply.id, err, reply.version)
        await exchange.respond_json(jsonrpc_status(err), body, error_headers(err))
    finally:
        if token is not None:
            ACTIVE.reset(token)


async def _serve(
    settings: Settings, exchange: Exchange, reply: _Reply, caller: Caller, asked: AskedVersion
) -> Coroutine[Any, Any, None] | None:
    """Answer a unary call (None); a streaming one's SSE response, to be awaited once the
    request's body, JSON and call are no longer held: only the stream's own state is."""
    value = loads(await exchange.read_body(settings.limits), settings.limits)
    try:
        call = jsonrpc.parse_request(value)
    except A2AError:
        reply.id = jsonrpc.request_id_of(value)  # (a parsed request's id is its own)
        raise
    reply.id = call.id
    found = JSONRPC_METHODS.get(call.method)
    if found is None:
        raise MethodNotFoundError(
            f"Method {call.method[:128]!r} not found", metadata={"method": call.method[:128]}
        )
    operation, version = found
    reply.version = version
    reply.version = version = require_version(asked, version)
    spec = OPERATIONS[operation]
    codec = JSONRPC[version]
    params = {} if call.params is None else call.params
    quota = None
    if settings.rate_limiter is not None:
        quota = await admit(settings, caller, exchange.request, operation)
    ctx, request = call_context(
        settings,
        exchange.request,
        version,
        decode=codec.decode_request,
        operation=operation,
        payload=params,
        caller=caller,
        quota=quota,
    )
    if call.is_notification:
        await exchange.respond(204, content_type=None)
        return None
    if not spec.streaming:
        try:  # (awaited here: no coroutine of ours between the binding and the handler)
            result = await UNARY[operation].call(settings.handler, ctx, request)
        except Exception as exc:
            raise to_a2a_error(exc, operation.value) from None
        body = jsonrpc.success(call.id, codec.encode_response(operation, result))
        echoed = echo_headers(ctx) if ctx.activated_extensions or ctx.quota is not None else ()
        await exchange.respond_json(200, body, echoed)
        return None

    in_stream = codec_table.JSONRPC_ERRORS_IN_STREAM[version]
    framing = _framing(call.id, codec, version)
    try:
        events = open_stream(settings.handler, STREAMING[operation], ctx, request)
    except A2AError as err:
        if not in_stream:
            raise
        await streaming.fail(exchange, framing, err, echo_headers(ctx))
        return None
    return streaming.stream(
        exchange,
        events,
        framing,
        settings.keepalive_seconds,
        echo_headers(ctx),
        early_error_in_stream=in_stream,
    )


def _framing(call_id: jsonrpc.RequestId, codec: Codec[Any], version: Version) -> streaming.Framing:
    """Each event as a frame of the success envelope for `call_id`; an error as a failure."""
    frames = _Frames(call_id, codec, version)
    return streaming.Framing(frames.event, frames.error)


class _Frames:
    """One stream's framing state: a few slots (closures would hold a cell apiece for as
    long as the stream is open)."""

    __slots__ = ("call_id", "codec", "head", "numbering", "tail", "version")

    def __init__(self, call_id: jsonrpc.RequestId, codec: Codec[Any], version: Version) -> None:
        self.call_id = call_id
        self.codec = codec
        self.version = version
        self.numbering = codec.version in generations.SHOWN_IN  # (the events carry none)
        # The envelope is the same for every event: encoded once, each result spliced in.
        self.head, self.tail = dumps(jsonrpc.success(call_id, None)).rsplit(b"null", 1)

    def event(self, item: StreamEvent, sequence: int | None) -> bytes:
        if self.numbering:
            item = generations.numbered(item, sequence)
        data = dumps(self.codec.encode_event(item))
        # `sse.encode`'s frame, written out: compact JSON is one line (no CR or LF in it).
        if sequence is None:
            return b"data: %s%s%s\n\n" % (self.head, data, self.tail)
        return b"id: %d\ndata: %s%s%s\n\n" % (sequence, self.head, data, self.tail)

    def error(self, err: A2AError) -> bytes:
        return sse.encode(dumps(jsonrpc.failure(self.call_id, err, self.version)))
