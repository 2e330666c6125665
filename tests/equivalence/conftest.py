"""One Parley server serving all three bindings from one `AgentService`: uvicorn (JSON-RPC
and HTTP+JSON) and the gRPC server, both in the test's own event loop on 127.0.0.1; its
card lists every binding in 1.0 (under the tenant `acme`) and 0.3, and declares a required
extension."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from msgspec.structs import replace

from parley.asgi import build_app
from parley.grpc import GrpcServer
from parley.model import AgentCapabilities, AgentCard, AgentExtension
from parley.protocol.negotiation import Version
from parley.server.service import AgentService
from parley.wire.limits import DEFAULT_LIMITS, Limits
from tests.client.agents import EXTENSION, OPTIONAL_EXTENSION, TENANT, build_client_agent
from tests.contracts.conftest import store_url
from tests.interop.agent import Probe
from tests.ports import free_port

__all__ = ["store_url"]  # re-exported: a fresh store of every backend

EXTENDED_NAME = "Equivalence (extended)"


def all_bindings_card(url: str, grpc_address: str) -> AgentCard:
    agent = build_client_agent(Probe())
    base = agent.card(url, grpc_address=grpc_address)
    interfaces = tuple(
        replace(i, tenant=TENANT if i.protocol_version == Version.V1_0.value else "")
        for i in base.supported_interfaces
    )
    extensions = (
        AgentExtension(uri=EXTENSION, required=True),
        AgentExtension(uri=OPTIONAL_EXTENSION),
    )
    capabilities = AgentCapabilities(
        streaming=True, push_notifications=True, extended_agent_card=True, extensions=extensions
    )
    return replace(base, supported_interfaces=interfaces, capabilities=capabilities)


@dataclass
class Server:
    """The server: the card's base URL, the service behind every binding, the probe."""

    url: str
    service: AgentService
    probe: Probe

    def leftovers(self) -> tuple[int, int]:
        return self.service.runner.live_count(), self.service.broker.subscriber_count()


def reserved() -> socket.socket:
    """A listening address on 127.0.0.1, bound now (its port can go in a card first)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def http_serving(
    service: AgentService, sock: socket.socket | None = None, limits: Limits = DEFAULT_LIMITS
) -> AsyncIterator[str]:
    """The service over HTTP: uvicorn in this loop (lifespan on: it starts the service)."""
    sock = sock or reserved()
    config = uvicorn.Config(
        build_app(service, limits=limits), lifespan="on", log_config=None,
        log_level="warning", http="h11", ws="none", timeout_graceful_shutdown=2,
    )  # fmt: skip
    http = uvicorn.Server(config)
    serving = asyncio.create_task(http.serve(sockets=[sock]))
    try:
        while not http.started:
            assert not serving.done(), "uvicorn did not start"
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        http.should_exit = True
        await serving
        sock.close()


@asynccontextmanager
async def all_bindings(
    probe: Probe, limits: Limits = DEFAULT_LIMITS, **options: Any
) -> AsyncIterator[tuple[str, AgentService]]:
    """A service of the client agent over HTTP and gRPC (both under `limits`); `options`
    go to the AgentService (e.g. `security`, `quotas`)."""
    sock = reserved()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    grpc_server_port = free_port()
    card = all_bindings_card(url, f"127.0.0.1:{grpc_server_port}")
    extended = replace(card, name=EXTENDED_NAME)
    agent = build_client_agent(probe).executor()
    service = AgentService(agent, card, extended_card=extended, **options)
    async with (
        http_serving(service, sock, limits),
        GrpcServer(service, port=grpc_server_port, limits=limits),
    ):
        yield url, service


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    probe = Probe()
    async with all_bindings(probe) as (url, service):
        yield Server(url, service, probe)
