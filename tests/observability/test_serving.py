"""Putting the observability wrappers in place (`parley.observability.serving`): a handler
is observed once however often it is asked; `observe_app` observes an A2AApp's handler, or
each mounted agent's, and tells the middleware where JSON-RPC posts arrive (so a mounted
agent's JSON-RPC call is counted as JSON-RPC, its REST call as HTTP+JSON); any other app
gets spans only; `observe_grpc` observes each servicer's handler and adds its interceptor;
`observe_clients` is undone by what it returns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from parley.asgi import build_app
from parley.asgi.mount import mount_agents
from parley.client.transport import transport_wrappers
from parley.grpc import GrpcServer
from parley.observability import Telemetry, build
from parley.observability.asgi import ObservedApp
from parley.observability.handler import ObservedHandler
from parley.observability.service import ObservedStore
from parley.observability.serving import (
    observe_app,
    observe_clients,
    observe_grpc,
    observed_handler,
)
from parley.protocol.negotiation import Version
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.asgi.helpers import V1, rpc, send_body, send_params
from tests.server.support import run


class Observed:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        self.telemetry: Telemetry = build([SimpleSpanProcessor(self.spans)], [self.metrics])

    def requests(self) -> dict[tuple[str, str], int]:
        """`a2a.server.requests` by (binding, method)."""
        data = self.metrics.get_metrics_data()
        found: dict[tuple[str, str], int] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name != "a2a.server.requests":
                        continue
                    for point in metric.data.data_points:
                        assert isinstance(point, NumberDataPoint)
                        labels = dict(point.attributes or {})
                        key = (str(labels["a2a.binding"]), str(labels["a2a.method"]))
                        found[key] = found.get(key, 0) + int(point.value)
        return found


@pytest.fixture
def observed() -> Iterator[Observed]:
    made = Observed()
    yield made
    made.telemetry.shutdown()


def service(name: str = "Echo") -> AgentService:
    agent = Agent(name)

    @agent.skill()
    async def answer(task: TaskContext) -> str:
        return task.text

    return AgentService(agent.executor(), agent.card(f"http://test/{name.lower()}"))


def test_a_handler_is_observed_once(observed: Observed) -> None:
    plain = service()
    once = observed_handler(plain, observed.telemetry)
    assert isinstance(once, ObservedHandler)
    assert isinstance(plain.store, ObservedStore)
    store = plain.store
    assert observed_handler(once, observed.telemetry) is once
    observed_handler(plain, observed.telemetry)
    assert plain.store is store  # the service's parts are not wrapped twice


def test_an_a2a_apps_handler_is_observed(observed: Observed) -> None:
    app = build_app(service())
    wrapped = observe_app(app, observed.telemetry)
    assert isinstance(wrapped, ObservedApp)
    assert isinstance(app.settings.handler, ObservedHandler)
    assert wrapped.jsonrpc_paths == frozenset({app.jsonrpc_path})


def test_each_mounted_agent_is_observed_under_its_path(observed: Observed) -> None:
    mounted = mount_agents({"echo": build_app(service("Echo")), "shout": build_app(service())})
    wrapped = observe_app(mounted, observed.telemetry)
    assert all(isinstance(a.settings.handler, ObservedHandler) for a in mounted.apps.values())
    assert wrapped.jsonrpc_paths == frozenset({"/echo/", "/echo", "/shout/", "/shout"})


def test_any_other_app_gets_spans_only(observed: Observed) -> None:
    async def plain(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    wrapped = observe_app(plain, observed.telemetry)
    assert wrapped.jsonrpc_paths == frozenset()

    async def main() -> int:
        transport = httpx.ASGITransport(app=wrapped)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return (await client.get("/anything")).status_code

    assert run(main()) == 204
    [span] = observed.spans.get_finished_spans()
    assert span.name == "GET"
    assert dict(span.attributes or {})["http.response.status_code"] == 204


def test_a_mounted_agents_calls_are_counted_by_the_binding_they_came_on(
    observed: Observed,
) -> None:
    mounted = mount_agents({"echo": build_app(service())})
    wrapped = observe_app(mounted, observed.telemetry)

    async def main() -> None:
        transport = httpx.ASGITransport(app=wrapped)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            jsonrpc = rpc("SendMessage", send_params(Version.V1_0))
            assert (await client.post("/echo/", json=jsonrpc, headers=V1)).status_code == 200
            rest = send_body(Version.V1_0)
            answered = await client.post("/echo/message:send", json=rest, headers=V1)
            assert answered.status_code == 200

    run(main())
    counted = observed.requests()
    assert counted[("JSONRPC", "SendMessage")] == 1
    assert counted[("HTTP+JSON", "SendMessage")] == 1


def test_a_grpc_server_is_observed_before_it_starts(observed: Observed) -> None:
    plain = service()
    server = GrpcServer(plain)
    before = list(server.interceptors)
    same = observe_grpc(server, observed.telemetry)
    assert same is server
    assert len(server.interceptors) == len(before) + 1
    handlers = [servicer.settings.handler for servicer in server.servicers]
    assert len(handlers) == 2  # one servicer per released version
    for handler in handlers:
        assert isinstance(handler, ObservedHandler)
        assert handler.handler is plain
    assert isinstance(plain.store, ObservedStore)
    assert not isinstance(plain.store.store, ObservedStore)  # the store traced once


def test_observing_clients_is_undone_by_what_it_returns(observed: Observed) -> None:
    before = transport_wrappers.get()
    undo = observe_clients(observed.telemetry)
    try:
        assert len(transport_wrappers.get()) == len(before) + 1
    finally:
        undo()
    assert transport_wrappers.get() == before
