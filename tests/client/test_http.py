"""The HTTP transports on the wire, against scripted servers: the headers they send, how
every kind of answer is read (A2A errors into the server's classes, anything else into the
client errors), retries of idempotent calls only, deadlines and size limits."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from parley.client import (
    Client,
    ClientConnectionError,
    ClientProtocolError,
    ClientTimeoutError,
    JsonRpcTransport,
    RestTransport,
    RetryPolicy,
    Transport,
)
from parley.model import Task, TaskState, TaskStatus
from parley.protocol.errors import (
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
    PermissionDeniedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnauthenticatedError,
    UnsupportedOperationError,
)
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.protocol.operations import Operation
from parley.wire import jsonrpc
from parley.wire.codec_table import JSONRPC, REST
from parley.wire.errors import ERROR_INFO_TYPE, jsonrpc_error, rest_error
from parley.wire.json_bytes import dumps, loads
from tests.client.scripted import Exchange, Handler, Request, scripted

pytestmark = pytest.mark.anyio

INFO = {"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND"}
TASK = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.WORKING))
QUICK = RetryPolicy(attempts=3, backoff=0.01)

Answer = Callable[[Request, Exchange], Awaitable[None]]


def rpc_id(request: Request) -> Any:
    return loads(request.body)["id"]


def answer_jsonrpc(
    result: Any = None, *, error: Exception | None = None, version: Version = Version.V1_0
) -> Handler:
    """Answer every JSON-RPC call with `result` (a Task, encoded) or `error`."""

    async def handle(request: Request, exchange: Exchange) -> None:
        body = loads(request.body)
        if error is not None:
            assert isinstance(error, TaskNotFoundError)
            await exchange.json(200, jsonrpc.failure(body["id"], error, version))
            return
        payload = JSONRPC[version].encode_response(Operation.GET_TASK, result)
        await exchange.json(200, jsonrpc.success(body["id"], payload))

    return handle


def raw(
    status: int, body: bytes, content_type: str = "application/json", **headers: str
) -> Handler:
    async def handle(request: Request, exchange: Exchange) -> None:
        await exchange.respond(status, body, content_type=content_type, headers=headers)

    return handle


async def call(transport: Transport, operation: str = "get", retry: RetryPolicy = QUICK) -> Any:
    async with Client(transport, retry=retry, timeout=2) as client:
        if operation == "get":
            return await client.get_task("t-1")
        if operation == "send":
            return await client.send("hi")
        if operation == "delete":
            return await client.delete_push_config("t-1", "c")
        raise AssertionError(operation)


# ------------------------------------------------------------------ headers


@pytest.mark.parametrize("version", list(RELEASED_VERSIONS))
async def test_headers_name_the_version_and_the_extensions(version: Version) -> None:
    """R-VER-3/8 and REFERENCE §1.4: `A2A-Version: Major.Minor` on every request; the
    extensions header of the version, comma-joined (R-SVC-3); extra headers."""
    async with scripted(answer_jsonrpc(TASK, version=version)) as server:
        transport = JsonRpcTransport(server.url, version, headers={"X-Trace": "abc"})
        async with Client(transport, extensions=["urn:a", "urn:b"]) as client:
            await client.get_task("t-1", extensions=["urn:b", "urn:c"])
    headers = server.requests[0].headers
    assert headers["a2a-version"] == version.value
    name = "a2a-extensions" if version is Version.V1_0 else "x-a2a-extensions"
    assert headers[name] == "urn:a, urn:b, urn:c"
    assert headers["x-trace"] == "abc"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json"


# ------------------------------------------------------------------ JSON-RPC answers


async def test_jsonrpc_error_with_an_http_error_status_is_still_the_a2a_error() -> None:
    async def handle(request: Request, exchange: Exchange) -> None:
        error = jsonrpc_error(TaskNotFoundError("gone"), Version.V1_0)
        await exchange.json(404, {"jsonrpc": "2.0", "id": rpc_id(request), "error": error})

    async with scripted(handle) as server:
        with pytest.raises(TaskNotFoundError, match="gone"):
            await call(JsonRpcTransport(server.url))


@pytest.mark.parametrize(
    ("handler", "match", "status"),
    [
        (raw(502, b"<html>bad gateway</html>", "text/html"), "HTTP 502", 502),
        (raw(200, b"[1, 2]"), "Not a JSON-RPC", 200),
        (raw(200, b'{"jsonrpc": "2.0", "id": 999, "result": {}}'), "does not match", 200),
        (raw(200, b'{"jsonrpc": "2.0", "id": 1, "result": {"id": 5}}'), "Unreadable", None),
        (raw(200, b'{"jsonrpc": "2.0", "id": 1}'), "Unreadable", None),
        (raw(401, b'{"detail": "who are you"}'), "HTTP 401", 401),
    ],
)
async def test_jsonrpc_answers_that_are_not_a2a(
    handler: Handler, match: str, status: int | None
) -> None:
    async with scripted(handler) as server:
        with pytest.raises(ClientProtocolError, match=match) as raised:
            await call(JsonRpcTransport(server.url), retry=RetryPolicy(attempts=1))
    if status is not None:
        assert raised.value.status_code == status


async def test_a_missing_null_result_is_accepted_where_nothing_is_expected() -> None:
    """The SDK's 0.3 server drops `"result": null` from a delete's answer."""
    async with scripted(raw(200, b'{"jsonrpc": "2.0", "id": 1}')) as server:
        assert await call(JsonRpcTransport(server.url, Version.V0_3), "delete") is None


async def test_an_operation_the_version_lacks_raises_without_a_call() -> None:
    async with scripted(answer_jsonrpc(TASK)) as server:
        for transport in (
            JsonRpcTransport(server.url, Version.V0_3),
            RestTransport(server.url, Version.V0_3),
        ):
            async with Client(transport) as client:
                with pytest.raises(MethodNotFoundError):
                    await client.list_tasks()
    assert server.requests == []


# ------------------------------------------------------------------ REST answers


def rest_answer(error: Exception, version: Version) -> Handler:
    async def handle(request: Request, exchange: Exchange) -> None:
        assert isinstance(error, TaskNotFoundError | TaskNotCancelableError)
        status, body = rest_error(error, version)
        await exchange.json(status, body)

    return handle


@pytest.mark.parametrize("version", list(RELEASED_VERSIONS))
async def test_rest_errors_decode_into_the_servers_classes(version: Version) -> None:
    """1.0: the Status body's ErrorInfo reason; 0.3: the HTTP status (REFERENCE §6.5)."""
    for error in (TaskNotFoundError("gone"), TaskNotCancelableError("done")):
        async with scripted(rest_answer(error, version)) as server:
            with pytest.raises(type(error)):
                await call(RestTransport(server.url, version))


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, b'{"error": {"code": 401, "message": "no", "details": []}}', UnauthenticatedError),
        (
            401,
            dumps({"error": {"code": 401, "message": "no", "details": [INFO]}}),
            TaskNotFoundError,
        ),
        (403, b'{"message": "forbidden"}', PermissionDeniedError),
        (500, b'{"message": "boom"}', InternalError),
        (422, b'{"message": "bad"}', InvalidParamsError),
        (404, b"<html>not here</html>", ClientProtocolError),
        (200, b"not json", ClientProtocolError),
    ],
)
async def test_rest_answers(status: int, body: bytes, expected: type[Exception]) -> None:
    async with scripted(raw(status, body)) as server:
        with pytest.raises(expected):
            await call(RestTransport(server.url, Version.V1_0), retry=RetryPolicy(attempts=1))


async def test_rest_requests_are_built_from_the_table() -> None:
    """Path parameters percent-encoded, the rest as the query (GET) or the body (POST);
    an empty answer body for a delete."""

    async def handle(request: Request, exchange: Exchange) -> None:
        if request.method == "DELETE":
            await exchange.respond(200, b"")
            return
        if request.path == "/tasks":
            payload = {"tasks": [], "nextPageToken": "", "pageSize": 5, "totalSize": 0}
        else:
            payload = REST[Version.V1_0].encode_response(Operation.GET_TASK, TASK)
        await exchange.json(200, payload)

    async with scripted(handle) as server, Client(RestTransport(server.url + "/")) as client:
        await client.get_task("a/b c", history_length=2)
        await client.list_tasks(page_size=5, include_artifacts=False, status=TaskState.WORKING)
        await client.delete_push_config("t 1", "c/1")
        with pytest.raises(InvalidParamsError, match="id"):
            await client.get_task("")
    get, listed, delete = server.requests
    assert (get.method, get.path, get.query) == (
        "GET",
        "/tasks/a%2Fb%20c",
        [("historyLength", "2")],
    )
    assert sorted(listed.query) == [
        ("includeArtifacts", "false"),
        ("pageSize", "5"),
        ("status", "TASK_STATE_WORKING"),
    ]
    assert (delete.method, delete.path) == ("DELETE", "/tasks/t%201/pushNotificationConfigs/c%2F1")


# ------------------------------------------------------------------ retries


def failing(times: int, status: int = 503, headers: dict[str, str] | None = None) -> Handler:
    """Answer `status` `times` times, then the task."""
    seen: list[int] = []

    async def handle(request: Request, exchange: Exchange) -> None:
        seen.append(1)
        if len(seen) <= times:
            await exchange.respond(
                status, b"busy", content_type="text/plain", headers=headers or {}
            )
            return
        await answer_jsonrpc(TASK)(request, exchange)

    return handle


@pytest.mark.parametrize("status", [429, 502, 503, 504])
async def test_idempotent_calls_are_retried(status: int) -> None:
    async with scripted(failing(2, status)) as server:
        assert await call(JsonRpcTransport(server.url)) == TASK
    assert len(server.requests) == 3


async def test_retries_stop_after_the_attempts() -> None:
    async with scripted(failing(5)) as server:
        with pytest.raises(ClientProtocolError) as raised:
            await call(JsonRpcTransport(server.url))
    assert raised.value.status_code == 503
    assert len(server.requests) == QUICK.attempts


async def test_retry_after_is_honoured_unless_too_long() -> None:
    async with scripted(failing(1, headers={"Retry-After": "0"})) as server:
        assert await call(JsonRpcTransport(server.url)) == TASK
    async with scripted(failing(1, headers={"Retry-After": "3600"})) as server:
        with pytest.raises(ClientProtocolError) as raised:
            await call(JsonRpcTransport(server.url))
    assert raised.value.retry_after == 3600
    assert len(server.requests) == 1


async def test_non_idempotent_calls_are_not_retried() -> None:
    async with scripted(failing(1)) as server:
        with pytest.raises(ClientProtocolError):
            await call(JsonRpcTransport(server.url), "send")
    assert len(server.requests) == 1


async def test_a2a_errors_are_not_retried() -> None:
    async with scripted(answer_jsonrpc(error=TaskNotFoundError())) as server:
        with pytest.raises(TaskNotFoundError):
            await call(JsonRpcTransport(server.url))
    assert len(server.requests) == 1


async def test_connection_failures_are_retried_then_raised() -> None:
    async with scripted(failing(0)) as server:
        url = server.url
    with pytest.raises(ClientConnectionError):
        await call(JsonRpcTransport(url))
    with pytest.raises(ClientConnectionError, match="invalid URL"):
        await call(JsonRpcTransport("::::"))


# ------------------------------------------------------------------ deadlines and limits


async def test_a_unary_call_has_a_deadline() -> None:
    async def silent(request: Request, exchange: Exchange) -> None:
        await asyncio.sleep(5)

    async with scripted(silent) as server:
        client = Client(JsonRpcTransport(server.url), timeout=0.2, retry=RetryPolicy(attempts=1))
        async with client:
            with pytest.raises(ClientTimeoutError, match=r"0\.2"):
                await client.send("hi")
            with pytest.raises(ClientTimeoutError):
                await client.get_task("t", timeout=0.1)


async def test_an_oversized_answer_is_refused() -> None:
    big = b'{"jsonrpc": "2.0", "id": 1, "result": "' + b"x" * 2048 + b'"}'
    async with scripted(raw(200, big)) as server:
        transport = JsonRpcTransport(server.url, max_response_bytes=1024)
        with pytest.raises(ClientProtocolError, match="larger than 1024"):
            await call(transport, retry=RetryPolicy(attempts=1))


async def test_unsupported_operation_is_decoded_from_jsonrpc() -> None:
    async def handle(request: Request, exchange: Exchange) -> None:
        error = UnsupportedOperationError("nope")
        await exchange.json(200, jsonrpc.failure(rpc_id(request), error, Version.V0_3))

    async with scripted(handle) as server:
        with pytest.raises(UnsupportedOperationError, match="nope"):
            await call(JsonRpcTransport(server.url, Version.V0_3))


async def test_waiting_for_a_pooled_connection_is_bounded() -> None:
    """One connection in the pool, held by a stream: the next call gives up after the
    connect timeout (httpx's PoolTimeout, translated)."""

    async def handle(request: Request, exchange: Exchange) -> None:
        await exchange.start_stream()
        await asyncio.sleep(5)

    async with scripted(handle) as server:
        http = httpx.AsyncClient(limits=httpx.Limits(max_connections=1))
        transport = JsonRpcTransport(server.url, http=http, connect_timeout=0.2)
        async with http, Client(transport, retry=RetryPolicy(attempts=1)) as client:
            stream = client.stream("hold the connection")
            pending = asyncio.ensure_future(anext(stream))
            await asyncio.sleep(0.1)
            with pytest.raises(ClientTimeoutError, match="PoolTimeout"):
                await client.get_task("t")
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
            await stream.aclose()
