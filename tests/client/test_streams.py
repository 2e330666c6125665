"""Streaming calls on the wire, against scripted servers: answers that are not a stream
(REFERENCE §7.1: errors before the first event come as a plain response), error frames
in a stream, frames the client cannot read, and the 405 fallback to another verb."""

from __future__ import annotations

from typing import Any

import pytest

from parley.client import (
    CallOptions,
    Client,
    ClientProtocolError,
    JsonRpcTransport,
    RestTransport,
    StreamPolicy,
    Transport,
    user_message,
)
from parley.client.rest import plan
from parley.model import SendMessageRequest, Task, TaskState, TaskStatus
from parley.protocol.errors import TaskNotFoundError, UnsupportedOperationError
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.protocol.operations import Route
from parley.wire import jsonrpc
from parley.wire.codec_table import JSONRPC
from parley.wire.errors import rest_error
from parley.wire.json_bytes import dumps, loads
from tests.client.scripted import Exchange, Handler, Request, scripted

pytestmark = pytest.mark.anyio

TASK = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.WORKING))
NO_RESUBSCRIBE = StreamPolicy(resubscribe=False)


async def first_items(transport: Transport, count: int = 1) -> list[Any]:
    client = Client(transport, streaming=NO_RESUBSCRIBE)
    async with client, client.stream("hi") as stream:
        return [await anext(stream) for _ in range(count)]


def answering(status: int, body: bytes, content_type: str = "application/json") -> Handler:
    async def handle(request: Request, exchange: Exchange) -> None:
        await exchange.respond(status, body, content_type=content_type)

    return handle


def streaming(*frames: tuple[Any, str | None]) -> Handler:
    """An SSE answer: each frame is (data, event name); data bytes are sent as they are."""

    async def handle(request: Request, exchange: Exchange) -> None:
        await exchange.start_stream()
        for data, event in frames:
            if isinstance(data, bytes):
                await exchange.chunk(b"data: " + data + b"\n\n")
            else:
                await exchange.event(data, event=event)
        await exchange.finish()

    return handle


def rpc(result: Any = None, error: Exception | None = None) -> dict[str, Any]:
    if error is not None:
        assert isinstance(error, TaskNotFoundError | UnsupportedOperationError)
        return jsonrpc.failure(1, error, Version.V1_0)
    return jsonrpc.success(1, JSONRPC[Version.V1_0].encode_event(result))


async def test_a_jsonrpc_error_instead_of_a_stream() -> None:
    body = dumps(rpc(error=TaskNotFoundError("gone")))
    async with scripted(answering(200, body)) as server:
        with pytest.raises(TaskNotFoundError, match="gone"):
            await first_items(JsonRpcTransport(server.url))


async def test_a_plain_result_instead_of_a_stream() -> None:
    async with scripted(answering(200, dumps(rpc(TASK)))) as server:
        with pytest.raises(ClientProtocolError, match="event stream"):
            await first_items(JsonRpcTransport(server.url))


@pytest.mark.parametrize("make", [JsonRpcTransport, RestTransport])
async def test_an_html_error_page_instead_of_a_stream(make: type[Any]) -> None:
    async with scripted(answering(503, b"<html>down</html>", "text/html")) as server:
        with pytest.raises(ClientProtocolError, match="HTTP 503") as raised:
            await first_items(make(server.url))
    assert raised.value.status_code == 503


async def test_a_rest_error_and_a_rest_success_that_is_not_a_stream() -> None:
    status, body = rest_error(TaskNotFoundError("gone"), Version.V1_0)
    async with scripted(answering(status, dumps(body))) as server:
        with pytest.raises(TaskNotFoundError):
            await first_items(RestTransport(server.url))
    async with scripted(answering(200, b"{}")) as server:
        with pytest.raises(ClientProtocolError, match="application/json"):
            await first_items(RestTransport(server.url))


async def test_an_error_frame_in_a_jsonrpc_stream() -> None:
    """A JSON-RPC error response in the stream ends it with the error (any event name)."""
    handler = streaming((rpc(TASK), None), (rpc(error=UnsupportedOperationError("x")), "error"))
    async with scripted(handler) as server:
        with pytest.raises(UnsupportedOperationError):
            await first_items(JsonRpcTransport(server.url), 2)


@pytest.mark.parametrize("version", list(RELEASED_VERSIONS))
async def test_an_error_frame_in_a_rest_stream(version: Version) -> None:
    """`event: error` with the version's error body; 1.0 names the class by its reason,
    0.3 by its JSON-RPC code."""
    _, body = rest_error(TaskNotFoundError("gone"), version)
    payload = JSONRPC[Version.V1_0].encode_event(TASK)
    async with scripted(streaming((payload, None), (body, "error"))) as server:
        with pytest.raises(TaskNotFoundError, match="gone"):
            await first_items(RestTransport(server.url, Version.V1_0), 2)


@pytest.mark.parametrize(
    "frame",
    [b"not json", dumps({"jsonrpc": "2.0", "id": 1, "result": {"unknown": {}}}), dumps([1])],
)
async def test_unreadable_frames(frame: bytes) -> None:
    async with scripted(streaming((frame, None))) as server:
        with pytest.raises(ClientProtocolError):
            await first_items(JsonRpcTransport(server.url))


async def test_subscribe_falls_back_to_the_other_verb_on_405() -> None:
    """SubscribeToTask has a GET and a POST route (REFERENCE D1, D2): a server with only
    one of them answers the other with 405, and the client tries the next."""

    async def handle(request: Request, exchange: Exchange) -> None:
        if request.method == "GET":
            await exchange.respond(405, b'{"message": "no"}', headers={"Allow": "POST"})
            return
        await streaming((JSONRPC[Version.V1_0].encode_event(TASK), None))(request, exchange)

    async with scripted(handle) as server:
        client = Client(RestTransport(server.url), streaming=NO_RESUBSCRIBE)
        async with client, client.subscribe("t-1") as stream:
            assert await anext(stream) == TASK
    assert [r.method for r in server.requests] == ["GET", "POST"]
    assert loads(server.requests[1].body) == {}


async def test_a_405_with_no_other_route_is_the_error() -> None:
    async with scripted(answering(405, b'{"message": "no"}')) as server:
        with pytest.raises(Exception, match="no") as raised:
            await first_items(RestTransport(server.url, Version.V0_3))
    assert type(raised.value).__name__ == "MethodNotFoundError"


async def test_an_event_stream_is_asked_for_and_empty_events_are_skipped() -> None:
    async with scripted(streaming((b"", None), (b" ", "ping"), (rpc(TASK), None))) as server:
        assert await first_items(JsonRpcTransport(server.url)) == [TASK]
    assert server.requests[0].headers["accept"] == "text/event-stream"


async def test_a_jsonrpc_stream_refused_with_405() -> None:
    async with scripted(answering(405, b"<html>no</html>", "text/html")) as server:
        with pytest.raises(ClientProtocolError, match="HTTP 405"):
            await first_items(JsonRpcTransport(server.url))
    assert len(server.requests) == 1


@pytest.mark.parametrize("make", [JsonRpcTransport, RestTransport])
async def test_a_transport_stream_is_an_async_iterator(make: type[Any]) -> None:
    """A transport's EventStream on its own: `async for`, then nothing more once closed."""
    handler = (
        streaming((rpc(TASK), None))
        if make is JsonRpcTransport
        else streaming((JSONRPC[Version.V1_0].encode_event(TASK), None))
    )
    async with scripted(handler) as server:
        transport = make(server.url)
        request = SendMessageRequest(message=user_message("hi"))
        stream = transport.send_streaming_message(request, CallOptions())
        assert [event async for event in stream] == [TASK]
        assert stream.last_event_id == ""
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        await transport.aclose()


def test_rest_payloads_become_paths_and_queries() -> None:
    """Objects and nulls have no query form; lists repeat; booleans are spelled out."""
    routes = (Route("GET", "/tasks/{id}"), Route("GET", "/{tenant}/tasks/{id}"))
    payload = {"id": "a b", "deep": {"x": 1}, "none": None, "many": [1, True, {"y": 2}], "f": 0.5}
    (call,) = plan(routes, payload)
    assert call.path == "/tasks/a%20b"
    assert call.query == [("many", "1"), ("many", "true"), ("f", "0.5")]
    (tenanted,) = plan(routes, {**payload, "tenant": "t/1"})
    assert tenanted.path == "/t%2F1/tasks/a%20b"
    (post,) = plan((Route("POST", "/tasks/{id}:cancel"),), {"id": "x", "metadata": {"k": 1}})
    assert (post.query, loads(post.body or b"")) == ([], {"metadata": {"k": 1}})
