"""One live Parley server (uvicorn on 127.0.0.1, gRPC beside it) for the interop tests,
serving the interop agent over JSON-RPC, HTTP+JSON and gRPC in 1.0 and 0.3, with its
hybrid card."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from parley.asgi import A2AApp, build_app
from parley.grpc import GrpcServer
from parley.server.service import AgentService
from tests.interop.agent import Probe, build_agent
from tests.interop.live import Live, serving
from tests.ports import free_port


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    probe = Probe()
    agent = build_agent(probe)
    services: list[AgentService] = []
    grpc_port = free_port()

    def make_app(url: str) -> A2AApp:
        card = agent.card(url, grpc_address=f"127.0.0.1:{grpc_port}")
        service = AgentService(agent.executor(), card)
        services.append(service)
        return build_app(service)

    def make_grpc() -> GrpcServer:
        return GrpcServer(services[0], port=grpc_port)

    with serving(make_app, make_grpc) as url:
        yield Live(url, services[0], probe)


@pytest.fixture(autouse=True)
def leaves_nothing_behind(live: Live) -> Iterator[None]:
    """After every test the server holds no task, subscriber or agent function."""
    yield
    deadline = time.monotonic() + 5
    while live.leftovers() != (0, 0, 0):
        assert time.monotonic() < deadline, f"left behind: {live.leftovers()}"
        time.sleep(0.01)
