"""SSE streaming on a real uvicorn server: framing per binding and version, errors before
and during the stream, keep-alive comments, and client disconnects closing the handler's
iterator (REFERENCE §7.1, §7.2, §7.3; R-STREAM-1, R-STREAM-6, R-STREAM-11)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.model import Task, TaskStatusUpdateEvent
from parley.protocol.negotiation import Version
from parley.wire import sse
from parley.wire.codec_table import JSONRPC, REST
from tests.asgi.fakes import ECHO_EXTENSION, FakeHandler, FakeStream
from tests.asgi.helpers import V1, error_reason, rpc, send_body, send_params

pytestmark = pytest.mark.anyio

V03 = Version.V0_3
V10 = Version.V1_0
Serve = Callable[[A2AApp], str]


async def read_stream(
    url: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[httpx.Response, bytes, list[sse.SSEEvent]]:
    """The response, its raw body and its parsed SSE events."""
    async with (
        httpx.AsyncClient(base_url=url, timeout=10) as client,
        client.stream(method, path, json=body, headers=headers) as response,
    ):
        raw = b"".join([chunk async for chunk in response.aiter_bytes()])
    return response, raw, sse.SSEParser().feed(raw)


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await anyio.sleep(0.01)


def assert_sse_headers(response: httpx.Response) -> None:
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"


def assert_one_data_line_per_event(raw: bytes) -> None:
    """Each event is exactly one `data:` line and a blank line (REFERENCE §7.1)."""
    for block in raw.decode().split("\n\n"):
        if block:
            lines = block.split("\n")
            assert [line for line in lines if line.startswith("data:")] == [lines[-1]]


@pytest.mark.parametrize(
    ("version", "method", "headers"),
    [(V10, "SendStreamingMessage", V1), (V03, "message/stream", {})],
)
async def test_jsonrpc_stream_framing(
    serve: Serve, handler: FakeHandler, version: Version, method: str, headers: dict[str, str]
) -> None:
    """Each event: `data: {"jsonrpc":"2.0","id":<request id>,"result":<event>}`."""
    url = serve(build_app(handler))
    response, raw, events = await read_stream(
        url, "POST", "/", rpc(method, send_params(version), "s-9"), headers
    )
    assert_sse_headers(response)
    assert_one_data_line_per_event(raw)
    bodies = [json.loads(e.data) for e in events]
    assert [b["id"] for b in bodies] == ["s-9", "s-9"]
    assert all(b["jsonrpc"] == "2.0" for b in bodies)
    decoded = [JSONRPC[version].decode_event(b["result"]) for b in bodies]
    assert [type(d) for d in decoded] == [Task, TaskStatusUpdateEvent]
    if version is V03:
        assert bodies[1]["result"]["final"] is True
    await eventually(lambda: handler.streams[-1].closed)  # after the last byte is sent


@pytest.mark.parametrize(
    ("version", "path", "headers"),
    [(V10, "/message:stream", V1), (V03, "/v1/message:stream", {})],
)
async def test_rest_stream_framing(
    serve: Serve, handler: FakeHandler, version: Version, path: str, headers: dict[str, str]
) -> None:
    """Each event: `data: <StreamResponse>`, no envelope."""
    url = serve(build_app(handler))
    response, raw, events = await read_stream(url, "POST", path, send_body(version), headers)
    assert_sse_headers(response)
    assert_one_data_line_per_event(raw)
    decoded = [REST[version].decode_event(json.loads(e.data)) for e in events]
    assert [type(d) for d in decoded] == [Task, TaskStatusUpdateEvent]
    assert all(e.event == "message" for e in events)


async def test_jsonrpc_error_before_the_first_event_is_a_plain_response(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """REFERENCE §7.1: nothing streamed yet, so a normal JSON-RPC error response."""
    response = await client.post(
        "/", json=rpc("SendStreamingMessage", send_params(V10, "fail-first"), 3), headers=V1
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert (body["id"], body["error"]["code"]) == (3, -32004)
    assert handler.streams[-1].closed


async def test_rest_error_before_the_first_event_is_a_plain_response(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/message:stream", json=send_body(V10, "fail-first"), headers=V1)
    assert response.status_code == 400
    assert error_reason(response.json()["error"]) == "UNSUPPORTED_OPERATION"


@pytest.mark.parametrize(("version", "headers"), [(V10, V1), (V03, {})])
async def test_jsonrpc_mid_stream_error_frame(
    serve: Serve, handler: FakeHandler, version: Version, headers: dict[str, str]
) -> None:
    """After the first event, an error is a data frame holding a JSON-RPC error response
    with the same id, then the stream closes (REFERENCE §7.1)."""
    url = serve(build_app(handler))
    method = "SendStreamingMessage" if version is V10 else "message/stream"
    _, _, events = await read_stream(
        url, "POST", "/", rpc(method, send_params(version, "fail-mid"), 11), headers
    )
    assert len(events) == 2
    last = json.loads(events[1].data)
    assert (last["id"], last["error"]["code"]) == (11, -32006)
    await eventually(lambda: handler.streams[-1].closed)  # after the last byte is sent


@pytest.mark.parametrize(
    ("version", "path", "headers"), [(V10, "/message:stream", V1), (V03, "/v1/message:stream", {})]
)
async def test_rest_mid_stream_error_event(
    serve: Serve, handler: FakeHandler, version: Version, path: str, headers: dict[str, str]
) -> None:
    """REST: `event: error` with the binding's error body, then close."""
    url = serve(build_app(handler))
    _, _, events = await read_stream(url, "POST", path, send_body(version, "fail-mid"), headers)
    assert [e.event for e in events] == ["message", "error"]
    body = json.loads(events[1].data)
    if version is V10:
        assert error_reason(body["error"]) == "INVALID_AGENT_RESPONSE"
    else:
        assert body == {
            "code": -32006,
            "message": "The agent went astray",
            "type": "InvalidAgentResponseError",
        }


async def test_mid_stream_crash_is_internal_error_without_traceback(
    serve: Serve, handler: FakeHandler
) -> None:
    url = serve(build_app(handler))
    _, raw, events = await read_stream(
        url, "POST", "/", rpc("SendStreamingMessage", send_params(V10, "crash-mid")), V1
    )
    assert json.loads(events[-1].data)["error"]["code"] == -32603
    assert b"secret" not in raw


async def test_unencodable_event_ends_the_stream_with_an_error(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    response = await client.post(
        "/", json=rpc("SendStreamingMessage", send_params(V10, "unencodable"), 2), headers=V1
    )
    bodies = [json.loads(e.data) for e in sse.SSEParser().feed(response.content)]
    assert "result" in bodies[0]
    assert bodies[1]["error"]["code"] == -32603
    assert len(bodies) == 2
    assert handler.streams[-1].closed


async def test_empty_stream(serve: Serve, handler: FakeHandler) -> None:
    url = serve(build_app(handler))
    response, raw, _ = await read_stream(
        url, "POST", "/message:stream", send_body(V10, "empty"), V1
    )
    assert_sse_headers(response)
    assert raw == b""


async def until_keep_alives(url: str, count: int) -> bytes:
    """A stream of an agent that never answers, read until `count` keep-alive comments
    have come; then the client leaves. What it read."""
    seen = b""
    async with (
        httpx.AsyncClient(base_url=url, timeout=10) as client,
        client.stream(
            "POST", "/", json=rpc("SendStreamingMessage", send_params(V10, "hang")), headers=V1
        ) as response,
    ):
        async for chunk in response.aiter_bytes():
            seen += chunk
            if seen.count(b": keep-alive\n\n") >= count:
                break
    return seen


async def test_keep_alive_comment_in_silence(serve: Serve, handler: FakeHandler) -> None:
    """A `: keep-alive` comment after `keepalive_seconds` without an event."""
    seen = await until_keep_alives(serve(build_app(handler, keepalive_seconds=0.05)), 2)
    first, _, rest = seen.partition(b"\n\n")
    assert first.startswith(b"data: ")
    assert rest.startswith(b": keep-alive\n\n")
    await eventually(lambda: handler.streams[-1].closed)


async def test_disconnect_after_keep_alives_closes_the_handler_iterator(
    serve: Serve, handler: FakeHandler
) -> None:
    """The keep-alive timer interrupts the watcher's `receive()` to write each comment;
    the watcher listens again after, so a client leaving later is still seen."""
    await until_keep_alives(serve(build_app(handler, keepalive_seconds=0.02)), 3)
    await eventually(lambda: handler.streams[-1].closed)
    assert handler.streams[-1].cancelled


async def _disconnect_after_first_event(
    url: str, method: str, path: str, body: Any, headers: dict[str, str]
) -> None:
    async with (
        httpx.AsyncClient(base_url=url, timeout=10) as client,
        client.stream(method, path, json=body, headers=headers) as response,
    ):
        parser = sse.SSEParser()
        async for chunk in response.aiter_bytes():
            if parser.feed(chunk):
                break  # leaving the block closes the connection


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/", rpc("SendStreamingMessage", send_params(V10, "hang"))),
        ("GET", "/tasks/task-1:subscribe", None),
        ("POST", "/tasks/task-1:subscribe", None),
    ],
)
async def test_client_disconnect_closes_the_handler_iterator(
    serve: Serve, handler: FakeHandler, method: str, path: str, body: Any
) -> None:
    """On disconnect the pending `__anext__` is cancelled and `aclose` called: nothing
    keeps running for a client that left (REFERENCE §7.4: the task itself lives on)."""
    url = serve(build_app(handler, keepalive_seconds=0))
    await _disconnect_after_first_event(url, method, path, body, V1)
    await eventually(lambda: bool(handler.streams) and handler.streams[-1].closed)
    stream: FakeStream = handler.streams[-1]
    assert stream.cancelled
    assert len(stream.delivered) == 1


async def test_subscribe_0_3_first_event_is_the_task(serve: Serve, handler: FakeHandler) -> None:
    url = serve(build_app(handler))
    async with (
        httpx.AsyncClient(base_url=url, timeout=10) as client,
        client.stream("POST", "/", json=rpc("tasks/resubscribe", {"id": "task-1"}, 5)) as response,
    ):
        parser = sse.SSEParser()
        events: list[sse.SSEEvent] = []
        async for chunk in response.aiter_bytes():
            events += parser.feed(chunk)
            if events:
                break
    body = json.loads(events[0].data)
    assert body["id"] == 5
    assert body["result"]["kind"] == "task"
    assert body["result"]["id"] == "task-1"


async def test_stream_echoes_extensions(serve: Serve, handler: FakeHandler) -> None:
    url = serve(build_app(handler))
    response, _, _ = await read_stream(
        url, "POST", "/message:stream", send_body(V10), {**V1, "A2A-Extensions": ECHO_EXTENSION}
    )
    assert response.headers["a2a-extensions"] == ECHO_EXTENSION


async def test_finite_stream_over_the_asgi_transport(
    client: httpx.AsyncClient, handler: FakeHandler
) -> None:
    """The same framing without a socket (the transport buffers the whole body)."""
    response = await client.post(
        "/", json=rpc("SendStreamingMessage", send_params(V10), 1), headers=V1
    )
    events = sse.SSEParser().feed(response.content)
    assert [list(json.loads(e.data)["result"]) for e in events] == [["task"], ["statusUpdate"]]
    assert handler.streams[-1].closed
