"""A live Parley gRPC server on 127.0.0.1 per test, serving the interop agent (both
versions' A2AService on one port) through a handler that records how its event streams
end, and the official SDK's card of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from a2a.types import a2a_pb2 as sdk_pb
from google.protobuf import json_format
from msgspec.structs import replace

from parley.grpc import GrpcServer
from parley.model import AgentCard, AgentExtension, StreamEvent
from parley.protocol.negotiation import Version
from parley.server.context import Authenticator, CallContext
from parley.server.service import AgentService
from parley.wire.codec_table import JSONRPC
from tests.interop.agent import Probe, build_agent
from tests.ports import free_port


@dataclass
class Recording:
    """The AgentService, with every call's context kept and every event stream's end
    recorded (`closed`: the iterators the binding closed, by request id or message id)."""

    service: AgentService
    contexts: list[CallContext] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)

    @property
    def card(self) -> AgentCard:
        return self.service.card

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.service, name)
        if not callable(method):  # e.g. the service's authenticator: as it is
            return method

        async def call(ctx: CallContext, request: Any) -> Any:
            self.contexts.append(ctx)
            return await method(ctx, request)

        return call

    def send_streaming_message(self, ctx: CallContext, request: Any) -> AsyncIterator[StreamEvent]:
        self.contexts.append(ctx)
        events = self.service.send_streaming_message(ctx, request)
        return self._recorded(request.message.message_id, events)

    def subscribe_to_task(self, ctx: CallContext, request: Any) -> AsyncIterator[StreamEvent]:
        self.contexts.append(ctx)
        return self._recorded(request.id, self.service.subscribe_to_task(ctx, request))

    async def _recorded(
        self, key: str, events: AsyncIterator[StreamEvent]
    ) -> AsyncIterator[StreamEvent]:
        self.opened.append(key)
        try:
            async for event in events:
                yield event
        finally:
            self.closed.append(key)
            await events.aclose()  # type: ignore[attr-defined]


@dataclass
class LiveGrpc:
    server: GrpcServer
    handler: Recording
    probe: Probe
    card: AgentCard

    @property
    def address(self) -> str:
        return self.server.address

    def sdk_card(self) -> Any:
        """The card as the official SDK holds it (the 1.0 card: every interface)."""
        value = JSONRPC[Version.V1_0].encode_card(self.card)
        return json_format.ParseDict(value, sdk_pb.AgentCard())


async def start_live(
    *,
    authenticator: Authenticator | None = None,
    extensions: tuple[AgentExtension, ...] = (),
    **server_options: Any,
) -> tuple[GrpcServer, Recording, Probe, AgentCard]:
    """Start a server (on a free port named in its card); the caller stops it."""
    probe = Probe()
    agent = build_agent(probe)
    port = free_port()
    card = agent.card("http://127.0.0.1:1", grpc_address=f"127.0.0.1:{port}")
    capabilities = replace(
        card.capabilities,
        push_notifications=True,
        extended_agent_card=True,
        extensions=(*card.capabilities.extensions, *extensions),
    )
    card = replace(card, capabilities=capabilities)
    extended = replace(card, name="Interop (extended)")
    service = AgentService(agent.executor(), card, extended_card=extended)
    handler = Recording(service)
    options: dict[str, Any] = dict(server_options)
    if authenticator is not None:
        options["authenticator"] = authenticator
    server = GrpcServer(handler, port=port, **options)
    await server.start()
    return server, handler, probe, card


@pytest.fixture
async def live() -> AsyncIterator[LiveGrpc]:
    server, handler, probe, card = await start_live()
    try:
        yield LiveGrpc(server, handler, probe, card)
    finally:
        await server.stop(0)
