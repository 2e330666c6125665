"""The isolation matrix's server and wire: one secured agent (two API keys, a bearer token,
anonymous callers let in) served for real over JSON-RPC, HTTP+JSON and gRPC in both
versions from one SQLite store, all in the test's own event loop; and raw calls that keep
each answer whole (status, headers but the date, body; gRPC status, details and both
metadata), so two answers can be compared byte for byte.

The agent's skills: `echo` completes at once, `hold` works until the test releases it,
`interview` asks for input until it is told "done".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
import uvicorn
from msgspec.structs import replace

from parley.asgi import build_app
from parley.client import APIKeyAuth, BearerAuth, JsonRpcTransport, RestTransport
from parley.client.auth import Auth
from parley.client.grpc import GrpcTransport
from parley.client.rest import PlannedCall, plan
from parley.client.transport import Transport
from parley.grpc import GrpcServer
from parley.model import Message, Model, TextPart
from parley.protocol.errors import TaskNotFoundError
from parley.protocol.negotiation import Version
from parley.protocol.operations import GRPC_SERVICES, OPERATIONS, Operation
from parley.server.agent import Agent
from parley.server.auth import ApiKeys, BearerTokens, Security
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from parley.wire.codec_table import GRPC, JSONRPC, REST
from parley.wire.errors import spec_of
from tests.auth.support import sqlite_service
from tests.ports import free_port

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
PRINCIPALS = ("alice", "bob", "carol", "anonymous")
KEYS = {"key-alice": "alice", "key-bob": "bob"}
TOKENS = {"token-carol": "carol"}
CREDENTIALS: Mapping[str, Mapping[str, str]] = {
    "alice": {"x-api-key": "key-alice"},
    "bob": {"x-api-key": "key-bob"},
    "carol": {"authorization": "Bearer token-carol"},
    "anonymous": {},
}
"""What each principal sends: HTTP headers, or gRPC metadata of the same names."""

CLIENT_AUTH: Mapping[str, Auth | None] = {
    "alice": APIKeyAuth("key-alice"),
    "bob": APIKeyAuth("key-bob"),
    "carol": BearerAuth("token-carol"),
    "anonymous": None,
}

CALL_WAIT = 3.0
"""Seconds a unary answer may take: a refusal is immediate, so this only ends a hang."""
STREAM_WAIT = 2.0
"""Seconds a refused stream may take to end; one still open then was served."""


def text_of(message: Message) -> str:
    return "".join(part.text for part in message.parts if isinstance(part, TextPart))


class Gates:
    """What `hold` runs wait for, one gate per message text, and when they started."""

    def __init__(self) -> None:
        self._gates: dict[str, asyncio.Event] = {}
        self._started: dict[str, asyncio.Event] = {}

    def gate(self, name: str) -> asyncio.Event:
        return self._gates.setdefault(name, asyncio.Event())

    def started(self, name: str) -> asyncio.Event:
        return self._started.setdefault(name, asyncio.Event())

    def release_all(self) -> None:
        for gate in self._gates.values():
            gate.set()


def matrix_agent(gates: Gates) -> Agent:
    security = Security(ApiKeys(KEYS), BearerTokens(TOKENS), anonymous=True)
    agent = Agent("Matrix", push_notifications=True, security=security)

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    @agent.skill()
    async def hold(task: TaskContext) -> str:
        await task.update("holding")
        gates.started(task.text).set()
        await gates.gate(task.text).wait()
        return "released"

    @agent.skill()
    async def interview(task: TaskContext) -> str:
        reply = await task.ask("Anything else?")
        while text_of(reply) != "done":
            reply = await task.ask("Anything else?")
        return "done"

    return agent


@dataclass(frozen=True)
class Answer:
    """What a caller got back: `code` is the JSON-RPC error code, the HTTP status or the
    gRPC status name ("ok" for a success, "open" for a stream that was served); `whole`
    is every byte of it but the date."""

    code: str
    whole: bytes

    def without(self, *values: str) -> bytes:
        """`whole` with each value (an id) replaced by its position's placeholder."""
        out = self.whole
        for index, value in enumerate(values):
            out = out.replace(value.encode(), f"<{index}>".encode())
        return out


def task_not_found(binding: str, version: Version) -> str:
    """The code TaskNotFound has on a binding in a version."""
    row = spec_of(TaskNotFoundError())
    if binding == "JSONRPC":
        return str(row.jsonrpc_code)
    if binding == "HTTP+JSON":
        return str(row.http_status if version is Version.V1_0 else row.http_status_v03)
    return grpc.StatusCode.NOT_FOUND.name


def _lines(pairs: Iterable[tuple[str, str | bytes]]) -> bytes:
    return b"".join(
        key.encode() + b": " + (value if isinstance(value, bytes) else value.encode()) + b"\n"
        for key, value in pairs
    )


def _http_answer(response: httpx.Response, body: bytes, jsonrpc: bool) -> Answer:
    headers = sorted((k, v) for k, v in response.headers.items() if k != "date")
    whole = f"{response.status_code}\n".encode() + _lines(headers) + b"\n" + body
    if not jsonrpc:
        return Answer("ok" if response.status_code == 200 else str(response.status_code), whole)
    data = [line[5:] for line in body.splitlines() if line.startswith(b"data:")]
    try:  # an error as an SSE event (0.3 streams), else the JSON-RPC response itself
        error = json.loads(data[0] if data else body).get("error")
    except (ValueError, AttributeError):
        return Answer(f"HTTP {response.status_code} (not JSON-RPC)", whole)
    return Answer("ok" if error is None else str(error["code"]), whole)


def _grpc_answer(error: grpc.aio.AioRpcError) -> Answer:
    whole = (
        f"{error.code().name}\n{error.details()}\n".encode()
        + _lines(error.initial_metadata())
        + b"\n"
        + _lines(error.trailing_metadata())
    )
    return Answer(error.code().name, whole)


def forms(binding: str, version: Version, operation: Operation) -> tuple[str, ...]:
    """The verbs HTTP+JSON takes an operation with (SubscribeToTask: GET and POST); the
    other bindings have one form, ""."""
    if binding != "HTTP+JSON":
        return ("",)
    routes = OPERATIONS[operation].bindings[version].routes
    return tuple(route.verb for route in routes if "{tenant}" not in route.path)


def _planned(
    binding: str, version: Version, operation: Operation, request: Model, form: str
) -> PlannedCall:
    """The HTTP request carrying `request` on JSON-RPC or HTTP+JSON (with the verb `form`)."""
    if binding == "JSONRPC":
        method = OPERATIONS[operation].bindings[version].jsonrpc_method
        params = JSONRPC[version].encode_request(operation, request)
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return PlannedCall("POST", "/", [], json.dumps(body).encode())
    routes = OPERATIONS[operation].bindings[version].routes
    calls = plan(routes, REST[version].encode_request(operation, request))
    return next(call for call in calls if call.verb == form or not form)


@dataclass
class Wire:
    """Raw calls to the served agent, as one principal would make them."""

    http: httpx.AsyncClient
    channel: grpc.aio.Channel

    async def call(
        self,
        binding: str,
        version: Version,
        principal: str,
        operation: Operation,
        request: Model,
        *,
        form: str = "",
    ) -> Answer:
        """What `principal` gets for `request`; `form` picks an HTTP+JSON verb (`forms`)."""
        if binding == "GRPC":
            return await self._grpc(version, principal, operation, request)
        planned = _planned(binding, version, operation, request, form)
        headers = {"a2a-version": version.value, **CREDENTIALS[principal]}
        if planned.body:
            headers["content-type"] = "application/json"
        streaming = OPERATIONS[operation].streaming
        try:
            # The answer's head within the client's CALL_WAIT, as a unary call's; then the
            # body's end within STREAM_WAIT (a slow head on a loaded machine is no stream).
            async with self.http.stream(
                planned.verb,
                planned.path,
                params=tuple(planned.query),
                content=planned.body,
                headers=headers,
            ) as response:
                async with asyncio.timeout(STREAM_WAIT if streaming else CALL_WAIT):
                    body_bytes = await response.aread()
        except TimeoutError:
            return Answer("open" if streaming else "timeout", b"")
        except httpx.HTTPError as error:
            return Answer(f"{type(error).__name__}", b"")
        return _http_answer(response, body_bytes, binding == "JSONRPC")

    async def _grpc(
        self, version: Version, principal: str, operation: Operation, request: Model
    ) -> Answer:
        method = f"/{GRPC_SERVICES[version]}/{OPERATIONS[operation].bindings[version].grpc_method}"
        data = GRPC[version].encode_request(operation, request).SerializeToString()
        metadata = (("a2a-version", version.value), *CREDENTIALS[principal].items())
        try:
            if not OPERATIONS[operation].streaming:
                unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = self.channel.unary_unary(
                    method
                )
                reply = await unary(data, metadata=metadata, timeout=CALL_WAIT)
                return Answer("ok", b"OK\n" + reply)
            stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = self.channel.unary_stream(
                method
            )
            call = stream(data, metadata=metadata, timeout=STREAM_WAIT)
            try:
                first = await call.read()
            finally:
                call.cancel()
            return Answer("ok" if first is grpc.aio.EOF else "open", b"")
        except grpc.aio.AioRpcError as error:
            return _grpc_answer(error)


@dataclass
class Served:
    """The agent served: its HTTP base URL, its gRPC address, the service, the gates."""

    url: str
    grpc_address: str
    service: AgentService
    gates: Gates
    wire: Wire
    _transports: dict[tuple[str, Version, str], Transport] = field(default_factory=dict)

    def transport(self, binding: str, version: Version, principal: str) -> Transport:
        """Parley's client transport for a binding, a version and a principal (one each)."""
        key = (binding, version, principal)
        if key not in self._transports:
            auth = CLIENT_AUTH[principal]
            made: Transport
            if binding == "JSONRPC":
                made = JsonRpcTransport(self.url + "/", version, auth=auth)
            elif binding == "HTTP+JSON":
                made = RestTransport(self.url, version, auth=auth)
            else:
                made = GrpcTransport(self.grpc_address, version, auth=auth)
            self._transports[key] = made
        return self._transports[key]

    async def aclose(self) -> None:
        for transport in self._transports.values():
            await transport.aclose()


@asynccontextmanager
async def serving(tmp_path: Path) -> AsyncIterator[Served]:
    """The matrix agent over SQLite, on uvicorn and gRPC in this event loop."""
    gates = Gates()
    agent = matrix_agent(gates)
    service = sqlite_service(agent, tmp_path)
    config = uvicorn.Config(
        build_app(service),
        host="127.0.0.1",
        port=free_port(),
        lifespan="on",  # starts and stops the service
        log_config=None,
        log_level="warning",
        http="h11",
        ws="none",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    serve = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if serve.done():
                raise RuntimeError("uvicorn did not start")
            await asyncio.sleep(0.01)
        url = f"http://{config.host}:{config.port}"
        async with (
            GrpcServer(service, port=free_port()) as grpc_server,
            grpc.aio.insecure_channel(grpc_server.address) as channel,
            httpx.AsyncClient(base_url=url, timeout=CALL_WAIT) as http,
        ):
            served = Served(url, grpc_server.address, service, gates, Wire(http, channel))
            try:
                yield served
            finally:
                gates.release_all()
                await served.aclose()
    finally:
        server.should_exit = True
        await serve


def with_skill(message: Message, skill: str) -> Message:
    """`message` asking for one of the matrix agent's skills."""
    return replace(message, metadata={"skill": skill})
