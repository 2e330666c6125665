"""The equivalence suite through three replicas (issue: many replicas, one agent): the
table of scenarios of `tests.equivalence.test_bindings`, each through the Parley client
over JSON-RPC, HTTP+JSON and gRPC in both protocol versions, against three services that
share one PostgreSQL schema and one Redis bus, each with its own HTTP and gRPC server,
behind round-robin proxies (`tests.replicas.proxy`): each request and each gRPC call
lands on the next replica. The outcomes must be what one server gives, and equal across
bindings (the suite's own assertions)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack

import pytest
from msgspec.structs import replace

from parley.grpc import GrpcServer
from parley.server.redis_bus import RedisBus
from parley.server.service import AgentService
from parley.server.stores.urls import open_store
from tests.client.agents import build_client_agent
from tests.crash.test_sigkill import postgres_url
from tests.equivalence.conftest import (
    EXTENDED_NAME,
    Server,
    all_bindings_card,
    http_serving,
    reserved,
)
from tests.equivalence.test_bindings import test_every_binding_gives_the_same_outcome
from tests.interop.agent import Probe
from tests.ports import free_port
from tests.replicas.proxy import GrpcRoundRobin, RoundRobin
from tests.replicas.test_bus import REDIS, prefix

__all__ = ["postgres_url", "prefix", "test_every_binding_gives_the_same_outcome"]

pytestmark = pytest.mark.anyio
REPLICAS = 3


class Replicated(Server):
    """The servers behind the proxies: what is left on any of them."""

    def __init__(self, url: str, services: list[AgentService], probe: Probe) -> None:
        super().__init__(url, services[0], probe)
        self.services = services

    def leftovers(self) -> tuple[int, int]:
        return (
            sum(service.runner.live_count() for service in self.services),
            sum(service.broker.subscriber_count() for service in self.services),
        )


@pytest.fixture(scope="module")
def tally() -> Iterator[list[list[int]]]:
    """Calls per replica over the module: HTTP ([0]) and gRPC ([1]); each replica served
    both."""
    counts = [[0] * REPLICAS, [0] * REPLICAS]
    yield counts
    assert min(counts[0]) > 0, counts
    assert min(counts[1]) > 0, counts


@pytest.fixture
async def server(postgres_url: str, prefix: str, tally: list[list[int]]) -> AsyncIterator[Server]:
    probe = Probe()
    front = reserved()
    url = f"http://127.0.0.1:{front.getsockname()[1]}"
    grpc_ports = [free_port() for _ in range(REPLICAS)]
    grpc_proxy = GrpcRoundRobin([f"127.0.0.1:{port}" for port in grpc_ports])
    card = all_bindings_card(url, f"127.0.0.1:{await grpc_proxy.start()}")
    extended = replace(card, name=EXTENDED_NAME)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(grpc_proxy.stop)
        services, urls = [], []
        for port in grpc_ports:
            tasks, configs = open_store(postgres_url)
            service = AgentService(
                build_client_agent(probe).executor(), card, extended_card=extended,
                store=tasks, push_store=configs, broker=RedisBus(REDIS, prefix=prefix),
            )  # fmt: skip
            urls.append(await stack.enter_async_context(http_serving(service)))
            await stack.enter_async_context(GrpcServer(service, port=port))
            services.append(service)
        proxy = RoundRobin(urls)
        await proxy.start(sock=front)
        stack.push_async_callback(proxy.stop)
        yield Replicated(url, services, probe)
        for number in range(REPLICAS):
            tally[0][number] += proxy.counts[number]
            tally[1][number] += grpc_proxy.counts[number]
