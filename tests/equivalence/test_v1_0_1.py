"""v1.0.1 rules that concern the client and the card, on every binding (docs/conformance.md):

* the tenant rule (REFERENCE §5.3, §10): the client puts its interface's `tenant` into
  every request it sends through it, and none when the interface has none;
* validation errors (REFERENCE §6.1, §6.3, R-ERR-10/18): the real service names the
  failing field in a google.rpc.BadRequest after the ErrorInfo, on every binding;
* custom bindings named by URI (R-BIND-7/19, REFERENCE §5.3): a card lists them, every
  binding that serves the card keeps them, and the client selects one when it is given a
  transport for it (and passes over it otherwise).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import grpc
import httpx
import pytest
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc as grpc10
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from msgspec.structs import replace

from parley.asgi import build_app
from parley.client import Client, JsonRpcTransport
from parley.client.auth import Auth
from parley.client.connect import TRANSPORTS
from parley.client.transport import Transport
from parley.grpc import GrpcServer
from parley.model import (
    AgentCard,
    AgentInterface,
    StreamEvent,
    SubscribeToTaskRequest,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import (
    ExtendedAgentCardNotConfiguredError,
    PushNotificationNotSupportedError,
)
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.asgi.fakes import CARD, FakeHandler
from tests.client.agents import EXTENSION
from tests.equivalence.conftest import Server
from tests.ports import free_port

pytestmark = pytest.mark.anyio

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
BASE = "http://testserver"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
CUSTOM = "https://bindings.example/carrier-pigeon/v1"
"""A custom binding's URI (R-BIND-7)."""
NEWEST_FIRST = (Version.V1_0, Version.V0_3)
OPERATIONS = {
    "send_message",
    "send_streaming_message",
    "get_task",
    "list_tasks",
    "cancel_task",
    "subscribe_to_task",
    "create_task_push_notification_config",
    "get_task_push_notification_config",
    "list_task_push_notification_configs",
    "delete_task_push_notification_config",
    "get_extended_agent_card",
}


def interfaces(grpc_address: str, tenant: str) -> tuple[AgentInterface, ...]:
    """Every binding in 1.0 (under `tenant`), then in 0.3."""
    urls = {"JSONRPC": f"{BASE}/", "HTTP+JSON": f"{BASE}/", "GRPC": grpc_address}
    return tuple(
        AgentInterface(
            url=urls[binding],
            protocol_binding=binding,
            protocol_version=version.value,
            tenant=tenant if version is Version.V1_0 else "",
        )
        for version in NEWEST_FIRST
        for binding in BINDINGS
    )


class Finite(FakeHandler):
    """The fake, its subscriptions ending: the snapshot, then COMPLETED (httpx's ASGI
    transport hands a response over only once it is complete)."""

    def subscribe_to_task(
        self, ctx: CallContext, request: SubscribeToTaskRequest
    ) -> AsyncIterator[StreamEvent]:
        self._record("subscribe_to_task", ctx, request)
        found = self._task(request.id)
        done = TaskStatusUpdateEvent(
            task_id=found.id,
            context_id=found.context_id,
            status=TaskStatus(state=TaskState.COMPLETED),
        )
        return self._stream([found, done])


@asynccontextmanager
async def fake_server(
    card: AgentCard, port: int
) -> AsyncIterator[tuple[httpx.AsyncClient, Finite]]:
    """`card` served by one recording fake over HTTP (in process) and gRPC (`port`): the
    httpx client of the HTTP side, and the fake."""
    handler = Finite(card=card)
    transport = httpx.ASGITransport(app=build_app(handler))
    async with (
        httpx.AsyncClient(transport=transport, base_url=BASE) as http,
        GrpcServer(handler, port=port),
    ):
        yield http, handler


async def every_operation(client: Client) -> None:
    """Each operation of the client's version once, on the fake's tasks (`task-1` is
    WORKING)."""
    await client.send("hello")
    async with client.stream("hello") as stream:
        _ = [item async for item in stream]
    await client.get_task("task-1")
    if client.version is Version.V1_0:  # 0.3 has no ListTasks (D13)
        await client.list_tasks()
    async with client.subscribe("task-1") as subscribed:
        _ = [item async for item in subscribed]
    await client.create_push_config("task-1", "https://example.com/hook", config_id="c1")
    await client.get_push_config("task-1", "c1")
    await client.list_push_configs("task-1")
    await client.delete_push_config("task-1", "c1")
    await client.get_extended_card()
    await client.cancel_task("task-1")


TENANCIES = [
    pytest.param(Version.V1_0, "acme", id="1.0-tenant"),
    pytest.param(Version.V1_0, "", id="1.0-none"),
    pytest.param(Version.V0_3, "", id="0.3"),
]


@pytest.mark.parametrize(("version", "tenant"), TENANCIES)
@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_client_echoes_the_interface_tenant(
    binding: str, version: Version, tenant: str
) -> None:
    """REFERENCE §5.3, §10: exactly the interface's tenant in every request (1.0), none
    when it has none; 0.3 has no tenant."""
    port = free_port()
    card = replace(CARD, supported_interfaces=interfaces(f"127.0.0.1:{port}", tenant))
    async with (
        fake_server(card, port) as (http, handler),
        Client.connect(BASE, http=http, versions=[version], bindings=[binding]) as client,
    ):
        assert client.interface is not None
        assert client.interface.protocol_binding == binding
        await every_operation(client)
    calls = handler.calls
    listed = OPERATIONS if version is Version.V1_0 else OPERATIONS - {"list_tasks"}
    assert {name for name, _, _ in calls} == listed
    assert [(name, ctx.tenant) for name, ctx, _ in calls] == [
        (name, tenant) for name, _, _ in calls
    ]


# ----------------------------------------------------------------------------- BadRequest

EMPTY_PARTS = {"messageId": "m-1", "role": "ROLE_USER", "parts": []}
HEADERS = {"A2A-Version": "1.0", "A2A-Extensions": EXTENSION}
INVALID_PARAMS = {"JSONRPC": -32602, "HTTP+JSON": "INVALID_ARGUMENT", "GRPC": "INVALID_ARGUMENT"}


async def invalid_send(server: Server, binding: str) -> tuple[int | str, list[dict[str, Any]]]:
    """A 1.0 SendMessage of a message without parts (R-DATA-10): the binding's code or
    status, and the error's details as ProtoJSON dicts."""
    if binding == "GRPC":
        address = next(
            i.url for i in server.service.card.supported_interfaces if i.protocol_binding == "GRPC"
        )
        request = pb.SendMessageRequest(
            message=pb.Message(message_id="m-1", role=pb.ROLE_USER), tenant="acme"
        )
        metadata = (("a2a-version", "1.0"), ("a2a-extensions", EXTENSION))
        async with grpc.aio.insecure_channel(address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await grpc10.A2AServiceStub(channel).SendMessage(request, metadata=metadata)
        status = rpc_status.from_call(raised.value)
        assert status is not None
        return raised.value.code().name, [unpacked(detail) for detail in status.details]
    async with httpx.AsyncClient(base_url=server.url) as http:
        if binding == "JSONRPC":
            params = {"message": EMPTY_PARTS, "tenant": "acme"}
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
            error = (await http.post("/", json=body, headers=HEADERS)).json()["error"]
            return error["code"], error["data"]
        response = await http.post(
            "/acme/message:send", json={"message": EMPTY_PARTS}, headers=HEADERS
        )
        error = response.json()["error"]
        assert error["code"] == response.status_code == 400
        return error["status"], error["details"]


def unpacked(detail: Any) -> dict[str, Any]:
    if detail.type_url == ERROR_INFO:
        info = error_details_pb2.ErrorInfo()
        assert detail.Unpack(info)
        return {"@type": ERROR_INFO, "reason": info.reason, "domain": info.domain}
    assert detail.type_url == BAD_REQUEST
    bad = error_details_pb2.BadRequest()
    assert detail.Unpack(bad)
    found = [{"field": v.field, "description": v.description} for v in bad.field_violations]
    return {"@type": BAD_REQUEST, "fieldViolations": found}


@pytest.mark.parametrize("binding", BINDINGS)
async def test_validation_errors_name_the_field_in_a_bad_request(
    server: Server, binding: str
) -> None:
    code, details = await invalid_send(server, binding)
    assert code == INVALID_PARAMS[binding]
    assert [d["@type"] for d in details] == [ERROR_INFO, BAD_REQUEST]
    assert details[0]["reason"] == "INVALID_PARAMS"
    assert details[0]["domain"] == "a2a-protocol.org"
    fields = [v["field"] for v in details[1]["fieldViolations"]]
    assert fields == ["message.parts"]
    assert all(v["description"] for v in details[1]["fieldViolations"])


# ----------------------------------------------------------------------------- §6.4 triggers


async def test_capability_errors_through_every_binding() -> None:
    """REFERENCE §6.4 by the real checks, through each binding: push-config operations
    of an agent without `pushNotifications`, and the extended card of one that declares
    it but has none."""
    agent = Agent("Plain", description="No push, no extended card.")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    port = free_port()
    card = agent.card(BASE, grpc_address=f"127.0.0.1:{port}")
    card = replace(card, capabilities=replace(card.capabilities, extended_agent_card=True))
    service = AgentService(agent.executor(), card)
    transport = httpx.ASGITransport(app=build_app(service))
    async with (
        httpx.AsyncClient(transport=transport, base_url=BASE) as http,
        GrpcServer(service, port=port),
    ):
        for binding in BINDINGS:
            async with Client.connect(BASE, http=http, bindings=[binding]) as client:
                assert client.interface is not None
                assert client.interface.protocol_binding == binding
                with pytest.raises(PushNotificationNotSupportedError):
                    await client.create_push_config("any", "https://example.com/hook")
                with pytest.raises(PushNotificationNotSupportedError):
                    await client.list_push_configs("any")
                with pytest.raises(ExtendedAgentCardNotConfiguredError):
                    await client.get_extended_card()


# ----------------------------------------------------------------------------- custom bindings


def custom_card(grpc_address: str) -> AgentCard:
    """A custom binding first in each version, then the standard ones."""
    standard = interfaces(grpc_address, "acme")
    custom = tuple(
        AgentInterface(
            url=f"pigeon://loft/{version.value}",
            protocol_binding=CUSTOM,
            protocol_version=version.value,
            tenant="acme" if version is Version.V1_0 else "",
        )
        for version in NEWEST_FIRST
    )
    return replace(CARD, supported_interfaces=(custom[0], *standard[:3], custom[1], *standard[3:]))


async def test_a_card_lists_custom_bindings_by_uri() -> None:
    """The public card (1.0 `protocolBinding`, 0.3 `transport`), and the extended card
    through every binding, keep the custom binding's URI."""
    port = free_port()
    card = custom_card(f"127.0.0.1:{port}")
    async with fake_server(card, port) as (http, _):
        document = (await http.get("/.well-known/agent-card.json")).json()
        for binding in BINDINGS:
            async with Client.connect(BASE, http=http, bindings=[binding]) as client:
                extended = await client.get_extended_card()
                assert extended.supported_interfaces == card.supported_interfaces, binding
    listed = [(i["protocolBinding"], i["protocolVersion"]) for i in document["supportedInterfaces"]]
    assert listed[0] == (CUSTOM, "1.0")
    assert (CUSTOM, "0.3") in listed
    assert document["preferredTransport"] == CUSTOM  # the first 0.3 interface
    assert {"url": "pigeon://loft/0.3", "transport": CUSTOM} in document["additionalInterfaces"]


@pytest.mark.parametrize("version", list(RELEASED_VERSIONS), ids=lambda v: v.value)
async def test_the_client_selects_a_custom_binding_it_has_a_transport_for(
    version: Version,
) -> None:
    """R-BIND-7, REFERENCE §5.3: listed first, the custom interface is passed over by a
    client without a transport for it, and chosen (its URL, version and tenant) by one
    given a transport under its URI."""
    port = free_port()
    made: list[tuple[str, Version]] = []

    def pigeon(
        url: str,
        version: Version,
        *,
        http: httpx.AsyncClient,
        auth: Auth | None,
        headers: Mapping[str, str] | None,
        connect_timeout: float,
    ) -> Transport:
        made.append((url, version))  # carried by JSON-RPC here, to reach the fake
        return JsonRpcTransport(f"{BASE}/", version, http=http, headers=headers)

    async with fake_server(custom_card(f"127.0.0.1:{port}"), port) as (http, handler):
        async with Client.connect(BASE, http=http, versions=[version]) as plain:
            assert plain.interface is not None
            assert plain.interface.protocol_binding == "JSONRPC"
        transports = {**TRANSPORTS, CUSTOM: pigeon}
        async with Client.connect(
            BASE, http=http, versions=[version], bindings=[CUSTOM, "JSONRPC"], transports=transports
        ) as client:
            assert client.interface is not None
            assert client.interface.protocol_binding == CUSTOM
            await client.get_task("task-1")
    assert made == [(f"pigeon://loft/{version.value}", version)]
    _, ctx, _ = handler.calls[-1]
    assert ctx.tenant == ("acme" if version is Version.V1_0 else "")
