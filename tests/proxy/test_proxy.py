"""`parley proxy` in front of the official a2a-sdk server (1.x) speaking JSON-RPC in 1.0 only:
Parley's client reaches it through the proxy over JSON-RPC, HTTP+JSON and gRPC, in 1.0 and
0.3 — send, stream, get, subscribe, cancel, multi-turn, push configs, the extended card,
and the upstream's errors as the same protocol errors."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentInterface
from msgspec.structs import replace
from starlette.applications import Starlette

from parley.asgi import A2AApp, build_app
from parley.cli.main import build_parser
from parley.cli.proxy import proxy_handler
from parley.client import (
    GRPC_BINDING,
    HTTP_JSON_BINDING,
    JSONRPC_BINDING,
    Client,
    JsonRpcTransport,
    fetch_card,
    user_message,
)
from parley.grpc import GrpcServer
from parley.model import (
    AgentCard,
    GetTaskRequest,
    Message,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnavailableError,
    UnsupportedOperationError,
)
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.server.agent import STREAM_RESUME, Agent
from parley.server.auth import ApiKeys, Security
from parley.server.context import CallContext
from parley.server.proxy import ProxyHandler, proxy_card
from tests.client.sdk_server import EXTENDED_NAME, SKILLS, Gates, SkillExecutor, sdk_card
from tests.interop.agent import STREAM_CHUNKS
from tests.interop.live import serving
from tests.ports import free_port

pytestmark = pytest.mark.anyio


def jsonrpc_only_app(url: str, gates: Gates) -> Any:
    """The SDK's app with one interface: JSON-RPC, 1.0, at `/` (no REST, no 0.3)."""

    def card(name: str = "SDK agent") -> Any:
        made = sdk_card(url, name=name)
        del made.supported_interfaces[:]
        made.supported_interfaces.append(
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        )
        return made

    handler = DefaultRequestHandler(
        agent_executor=SkillExecutor(gates),
        task_store=InMemoryTaskStore(),
        agent_card=card(),
        push_config_store=InMemoryPushNotificationConfigStore(),
        extended_agent_card=card(EXTENDED_NAME),
    )
    routes = [*create_agent_card_routes(card()), *create_jsonrpc_routes(handler, "/")]
    return Starlette(routes=routes)


@dataclass(frozen=True)
class Proxied:
    upstream: str
    url: str
    gates: Gates


@pytest.fixture(scope="module")
def proxied() -> Iterator[Proxied]:
    gates = Gates()
    make_sdk = cast("Callable[[str], A2AApp]", lambda url: jsonrpc_only_app(url, gates))
    with serving(make_sdk) as upstream:
        upstream_card = asyncio.run(fetch_card(upstream))
        grpc_port = free_port()
        handlers: list[ProxyHandler] = []

        def make_proxy(url: str) -> A2AApp:
            card = proxy_card(upstream_card, url, grpc_address=f"127.0.0.1:{grpc_port}")
            handlers.append(ProxyHandler(upstream, card))
            return build_app(handlers[0])

        def make_grpc() -> GrpcServer:
            return GrpcServer(handlers[0], port=grpc_port)

        with serving(make_proxy, make_grpc) as url:
            yield Proxied(upstream, url, gates)


@dataclass(frozen=True)
class Mode:
    version: Version
    binding: str

    def __str__(self) -> str:
        return f"{self.version.value}-{self.binding}"


MODES = [
    Mode(v, b)
    for v in RELEASED_VERSIONS
    for b in (JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING)
]


@pytest.fixture(params=MODES, ids=str)
async def client(proxied: Proxied, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    mode: Mode = request.param
    async with Client.connect(proxied.url, versions=[mode.version], bindings=[mode.binding]) as c:
        assert (c.version, c.interface and c.interface.protocol_binding) == (
            mode.version,
            mode.binding,
        )
        yield c


def ask(text: str, skill: str) -> Message:
    return user_message(text, metadata={"skill": skill})


def key(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def text_of(parts: tuple[object, ...]) -> str:
    return "".join(p.text for p in parts if isinstance(p, TextPart))


async def task_of(client: Client, message: Message, *, return_immediately: bool = False) -> Task:
    result = await client.send(message, return_immediately=return_immediately)
    assert isinstance(result, Task)
    return result


async def test_the_proxy_card_is_the_upstreams_at_the_proxys_interfaces(
    proxied: Proxied,
) -> None:
    card = await fetch_card(proxied.url)
    assert card.name == "SDK agent"
    assert [s.id for s in card.skills] == list(SKILLS)
    listed = {(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces}
    assert listed == {
        (b, v.value)
        for v in RELEASED_VERSIONS
        for b in (JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING)
    }
    http = [i.url for i in card.supported_interfaces if i.protocol_binding != GRPC_BINDING]
    assert set(http) == {proxied.url}


async def test_send_and_get(client: Client) -> None:
    message = ask(key("echo"), "echo")
    task = await task_of(client, message)
    assert task.status.state is TaskState.COMPLETED
    assert [text_of(a.parts) for a in task.artifacts] == [text_of(message.parts)]
    got = await client.get_task(task.id)
    assert (got.id, got.status.state) == (task.id, TaskState.COMPLETED)


async def test_stream(client: Client) -> None:
    async with client.stream(ask(key("chunks"), "chunks")) as stream:
        items = [item async for item in stream]
    assert [type(i) for i in items] == [Task, TaskStatusUpdateEvent] + [
        TaskArtifactUpdateEvent
    ] * len(STREAM_CHUNKS) + [TaskStatusUpdateEvent]
    chunks = [text_of(i.artifact.parts) for i in items if isinstance(i, TaskArtifactUpdateEvent)]
    assert chunks == list(STREAM_CHUNKS)
    last = items[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED


async def test_multi_turn(client: Client) -> None:
    asked = await task_of(client, ask(key("greet"), "greet"))
    assert asked.status.state is TaskState.INPUT_REQUIRED
    done = await task_of(client, user_message("Ada", task_id=asked.id))
    assert [text_of(a.parts) for a in done.artifacts] == ["Hello, Ada!"]


async def test_subscribe_and_cancel(client: Client, proxied: Proxied) -> None:
    text = key("wait")
    task = await task_of(client, ask(text, "wait"), return_immediately=True)
    try:
        async with client.subscribe(task.id) as stream:
            first = await anext(stream)
            assert isinstance(first, Task)
            assert first.id == task.id
            proxied.gates.gate(text).set()
            rest = [item async for item in stream]
        last = rest[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.COMPLETED
    finally:
        proxied.gates.gate(text).set()
    running = await task_of(client, ask(key("cancel"), "wait"), return_immediately=True)
    cancelled = await client.cancel_task(running.id)
    assert cancelled.status.state is TaskState.CANCELED


async def test_upstream_errors_are_the_same_errors(client: Client) -> None:
    with pytest.raises(TaskNotFoundError):
        await client.get_task("no-such-task")
    with pytest.raises(TaskNotFoundError):
        await client.cancel_task("no-such-task")
    done = await task_of(client, ask(key("done"), "echo"))
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(done.id)
    with pytest.raises(UnsupportedOperationError):
        await client.send("more", task_id=done.id)
    with pytest.raises(UnsupportedOperationError):
        await anext(client.subscribe(done.id))


async def test_push_configs_and_the_extended_card(client: Client, proxied: Proxied) -> None:
    task = await task_of(client, ask(key("push"), "echo"))
    created = await client.create_push_config(task.id, "https://example.com/hook", config_id="c1")
    assert (created.task_id, created.id) == (task.id, "c1")
    assert [c.id for c in (await client.list_push_configs(task.id)).configs] == ["c1"]
    await client.delete_push_config(task.id, "c1")
    extended = await client.get_extended_card()
    assert extended.name == EXTENDED_NAME
    assert {i.url for i in extended.supported_interfaces} >= {proxied.url}
    assert proxied.upstream not in {i.url for i in extended.supported_interfaces}


# ----------------------------------------------------------------- the card, the CLI


def _plain_card() -> AgentCard:
    return Agent("plain").card("http://upstream.example")


def upstream_with_security() -> AgentCard:
    card = _plain_card()
    extensions = (*card.capabilities.extensions, STREAM_RESUME)
    card = replace(card, capabilities=replace(card.capabilities, extensions=extensions))
    return Security(ApiKeys({"k": "alice"})).apply(card)


def test_the_card_drops_what_the_proxy_does_not_do() -> None:
    """The upstream's security (the proxy calls it as itself) and the stream-resume
    extension (the proxy's streams do not resume) are not in the proxy's card; with
    `keep_security` (callers' credentials forwarded) the security stays."""
    upstream = upstream_with_security()
    assert upstream.security_schemes
    card = proxy_card(upstream, "http://proxy.example")
    assert card.security_schemes == {}
    assert card.security_requirements == ()
    assert STREAM_RESUME.uri not in {e.uri for e in card.capabilities.extensions}
    kept = proxy_card(upstream, "http://proxy.example", keep_security=True)
    assert kept.security_schemes == upstream.security_schemes


async def test_the_proxys_own_security_is_in_its_card() -> None:
    card = proxy_card(_plain_card(), "http://proxy.example")
    handler = ProxyHandler("http://upstream.example", card, security=Security(ApiKeys({"k": "a"})))
    assert handler.card.security_schemes
    assert handler.authenticator is handler.security


async def test_an_unreachable_upstream_is_unavailable() -> None:
    """UnavailableError before the proxy is connected, and when its upstream is gone."""
    card = proxy_card(_plain_card(), "http://proxy.example")
    gone = f"http://127.0.0.1:{free_port()}"

    async def connect() -> Client:
        return Client(JsonRpcTransport(gone, connect_timeout=1))

    handler = ProxyHandler(gone, card, connect=connect)
    with pytest.raises(UnavailableError):
        await handler.get_task(CallContext(), GetTaskRequest(id="t"))
    await handler.startup()
    try:
        with pytest.raises(UnavailableError):
            await handler.get_task(CallContext(), GetTaskRequest(id="t"))
        with pytest.raises(UnavailableError):
            await anext(
                aiter(handler.subscribe_to_task(CallContext(), SubscribeToTaskRequest(id="t")))
            )
    finally:
        await handler.shutdown()


def test_the_command_builds_the_proxy_of_the_upstream(proxied: Proxied) -> None:
    arguments = build_parser().parse_args(
        [
            "proxy",
            "--to",
            proxied.upstream,
            "--port",
            "8123",
            "--grpc-port",
            "8124",
            "--api-key",
            "k:alice",
            "--rate-limit",
            "5/second",
        ]
    )
    handler = proxy_handler(arguments)
    assert handler.upstream == proxied.upstream
    assert handler.card.name == "SDK agent"
    urls = {i.url for i in handler.card.supported_interfaces}
    assert urls == {"http://127.0.0.1:8123", "127.0.0.1:8124"}
    assert handler.card.security_schemes
    assert handler.rate_limiter is not None
