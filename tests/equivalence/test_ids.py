"""Odd ids at the edge: a NUL character or 1 MB in a task id, context id, tenant, message id
or push config id is InvalidParams on every binding (JSON-RPC, HTTP+JSON, gRPC) in both
versions, on every store (memory, SQLite, PostgreSQL) — JSON-RPC -32602, the version's
HTTP status for it, gRPC INVALID_ARGUMENT; never an internal error — and the server serves
ordinary requests afterwards.

HTTP requests go straight to the ASGI app (a raw scope: a 1 MB path is past httpx's URL
limit, and no HTTP server in front decides for the app); gRPC goes through a real server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlencode

import grpc
import httpx
import pytest

from parley.asgi import A2AApp, build_app
from parley.client import CallOptions, JsonRpcTransport, RestTransport
from parley.client.grpc import GrpcTransport
from parley.client.rest import plan
from parley.client.transport import Transport
from parley.grpc import GrpcServer
from parley.model import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Model,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TextPart,
)
from parley.protocol.errors import InvalidParamsError
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.protocol.operations import GRPC_SERVICES, OPERATIONS, Operation
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.stores import open_store
from parley.server.task_context import TaskContext
from parley.wire.codec_table import GRPC, JSONRPC, REST
from parley.wire.errors import spec_of
from tests.contracts.support import run
from tests.ports import free_port

NUL = "odd\x00id"
BIG = "x" * 1_000_000
"""1 MB."""

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
HOOK = "https://example.com/hook"


def ask(
    text: str = "hello", *, message_id: str = "", task_id: str = "", context_id: str = ""
) -> Message:
    return Message(
        message_id=message_id or f"m-{text}",
        role=Role.USER,
        parts=(TextPart(text=text),),
        task_id=task_id,
        context_id=context_id,
    )


@dataclass(frozen=True)
class Case:
    """One odd value in one field: the field as the error names it, the request carrying
    the value, and the versions that have a home for it (0.3 has no tenant, no ListTasks)."""

    field: str
    build: Callable[[str], Model]
    versions: tuple[Version, ...] = (Version.V1_0, Version.V0_3)


V1_ONLY = (Version.V1_0,)
CASES = (
    Case("id", lambda v: GetTaskRequest(id=v)),
    Case("tenant", lambda v: GetTaskRequest(id="t-1", tenant=v), V1_ONLY),
    Case("tenant", lambda v: SendMessageRequest(message=ask(), tenant=v), V1_ONLY),
    Case("message.taskId", lambda v: SendMessageRequest(message=ask(task_id=v))),
    Case("message.contextId", lambda v: SendMessageRequest(message=ask(context_id=v))),
    Case("message.messageId", lambda v: SendMessageRequest(message=ask(message_id=v))),
    Case("contextId", lambda v: ListTasksRequest(context_id=v), V1_ONLY),
    Case("id", lambda v: TaskPushNotificationConfig(url=HOOK, task_id="t-1", id=v)),
    Case(
        "configuration.taskPushNotificationConfig.id",
        lambda v: SendMessageRequest(
            message=ask(),
            configuration=SendMessageConfiguration(
                push_notification_config=TaskPushNotificationConfig(url=HOOK, id=v)
            ),
        ),
    ),
)


def operation_of(request: Model) -> Operation:
    if isinstance(request, SendMessageRequest):
        return Operation.SEND_MESSAGE
    if isinstance(request, GetTaskRequest):
        return Operation.GET_TASK
    if isinstance(request, ListTasksRequest):
        return Operation.LIST_TASKS
    return Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG


@dataclass(frozen=True)
class Answer:
    """What came back: the JSON-RPC error code, the HTTP status or the gRPC status name
    ("ok" for a success), and the error message."""

    code: int | str
    message: str = ""


def invalid_params(binding: str, version: Version) -> int | str:
    row = spec_of(InvalidParamsError())
    if binding == "JSONRPC":
        return row.jsonrpc_code
    if binding == "HTTP+JSON":
        return row.http_status if version is Version.V1_0 else row.http_status_v03
    return grpc.StatusCode.INVALID_ARGUMENT.name


async def asgi(
    app: A2AApp, verb: str, path: str, query: list[tuple[str, str]], body: bytes, *, v: Version
) -> tuple[int, Any]:
    """One HTTP request to the app; the status and the decoded JSON answer."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": verb,
        "scheme": "http",
        "path": unquote(path),
        "raw_path": path.encode("ascii"),
        "root_path": "",
        "query_string": urlencode(query).encode("ascii"),
        "headers": [(b"a2a-version", v.value.encode()), (b"content-type", b"application/json")],
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 50000),
    }
    incoming: list[MutableMapping[str, Any]] = [
        {"type": "http.request", "body": body, "more_body": False}
    ]
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return incoming.pop() if incoming else {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(data)


@dataclass
class Wire:
    """The ASGI app and a channel to the gRPC server, both over one service."""

    app: A2AApp
    channel: grpc.aio.Channel

    async def call(self, binding: str, version: Version, request: Model) -> Answer:
        operation = operation_of(request)
        if binding == "JSONRPC":
            return await self._jsonrpc(version, operation, request)
        if binding == "HTTP+JSON":
            return await self._rest(version, operation, request)
        return await self._grpc(version, operation, request)

    async def _jsonrpc(self, version: Version, operation: Operation, request: Model) -> Answer:
        method = OPERATIONS[operation].bindings[version].jsonrpc_method
        params = JSONRPC[version].encode_request(operation, request)
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        _, reply = await asgi(self.app, "POST", "/", [], json.dumps(body).encode(), v=version)
        error = reply.get("error")
        return Answer("ok") if error is None else Answer(error["code"], error["message"])

    async def _rest(self, version: Version, operation: Operation, request: Model) -> Answer:
        routes = OPERATIONS[operation].bindings[version].routes
        call = plan(routes, REST[version].encode_request(operation, request))[0]
        status, reply = await asgi(
            self.app, call.verb, call.path, call.query, call.body or b"", v=version
        )
        if status == 200:
            return Answer("ok")
        return Answer(status, reply["error"]["message"] if "error" in reply else reply["message"])

    async def _grpc(self, version: Version, operation: Operation, request: Model) -> Answer:
        method = OPERATIONS[operation].bindings[version].grpc_method
        call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self.channel.unary_unary(
            f"/{GRPC_SERVICES[version]}/{method}"
        )
        data = GRPC[version].encode_request(operation, request).SerializeToString()
        try:
            await call(data, metadata=(("a2a-version", version.value),), timeout=10)
        except grpc.aio.AioRpcError as error:
            return Answer(error.code().name, error.details() or "")
        return Answer("ok")


def matrix() -> Iterator[tuple[str, Version, Case, str]]:
    for case in CASES:
        for version in case.versions:
            for binding in BINDINGS:
                for value in (NUL, BIG):
                    yield binding, version, case, value


def echo_agent() -> Agent:
    agent = Agent("Ids", push_notifications=True)

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    return agent


def transports(app: A2AApp, http: httpx.AsyncClient, address: str) -> list[Transport]:
    """Parley's client transports, one per binding and version."""
    out: list[Transport] = []
    for version in RELEASED_VERSIONS:
        out.append(JsonRpcTransport("http://testserver/", version, http=http))
        out.append(RestTransport("http://testserver", version, http=http))
        out.append(GrpcTransport(address, version))
    return out


async def exercise(url: str) -> tuple[list[str], list[str]]:
    """Every case through every binding, then an ordinary send and get through each;
    what went wrong in each part."""
    agent = echo_agent()
    tasks, push = open_store(url)
    card = agent.card("http://testserver")
    service = AgentService(agent.executor(), card, store=tasks, push_store=push)
    app = build_app(service)
    await service.startup()
    try:
        async with (
            GrpcServer(service, port=free_port()) as server,
            grpc.aio.insecure_channel(server.address) as channel,
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http,
        ):
            wire = Wire(app, channel)
            odd = [await odd_case(wire, *row) for row in matrix()]
            ordinary = [await ordinary_case(t) for t in transports(app, http, server.address)]
    finally:
        await service.shutdown()
    return [p for p in odd if p], [p for p in ordinary if p]


async def odd_case(wire: Wire, binding: str, version: Version, case: Case, value: str) -> str:
    """Nothing if the odd value was refused as InvalidParams naming its field, else what
    came back."""
    answer = await wire.call(binding, version, case.build(value))
    if answer.code == invalid_params(binding, version) and case.field in answer.message:
        return ""
    what = "NUL" if value == NUL else "1 MB"
    return f"{binding} {version.value} {what} {case.field}: {answer.code} {answer.message[:80]}"


async def ordinary_case(transport: Transport) -> str:
    """Nothing if an ordinary send and a get of its task succeed, else what failed."""
    options = CallOptions(timeout=10)
    try:
        request = SendMessageRequest(message=ask(type(transport).__name__))
        task = await transport.send_message(request, options)
        assert isinstance(task, Task)
        got = await transport.get_task(GetTaskRequest(id=task.id), options)
        assert isinstance(got, Task)
        assert got.status.state is TaskState.COMPLETED
    except Exception as error:
        return f"{type(transport).__name__} {transport.version.value}: {error!r}"
    finally:
        await transport.aclose()
    return ""


def test_odd_ids_are_invalid_params_on_every_binding_and_store(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        odd, ordinary = run(exercise(store_url))
    assert odd == []
    assert ordinary == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
