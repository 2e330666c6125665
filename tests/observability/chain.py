"""Three agents served in this event loop, each calling the next with the Parley client
over one binding (A → B → C), every server and client observed with one Telemetry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import uvicorn
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from parley.asgi import build_app
from parley.client import GRPC_BINDING, Client
from parley.grpc import GrpcServer
from parley.model import Task
from parley.observability import Telemetry, build, observe_app, observe_clients, observe_grpc
from parley.server.agent import Agent
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.ports import free_port


@dataclass
class Observed:
    telemetry: Telemetry
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader


@asynccontextmanager
async def observed(*, prometheus: bool = False) -> AsyncIterator[Observed]:
    """A Telemetry over in-memory exporters, every client of the process instrumented."""
    spans, metrics = InMemorySpanExporter(), InMemoryMetricReader()
    telemetry = build([SimpleSpanProcessor(spans)], [metrics], prometheus=prometheus)
    undo = observe_clients(telemetry)
    try:
        yield Observed(telemetry, spans, metrics)
    finally:
        undo()
        telemetry.shutdown()


def relay(name: str, following: str | None, binding: str) -> Agent:
    """An agent that answers `NAME:text`, after asking the agent at `following`."""
    agent = Agent(name, description=f"Agent {name} of the chain.")

    @agent.skill()
    async def answer(task: TaskContext) -> str:
        if following is None:
            return f"{name}:{task.text}"
        async with Client.connect(following, bindings=[binding]) as client:
            result = await client.send(task.text)
        assert isinstance(result, Task)
        return f"{name}:{result.artifacts[0].text}"

    return agent


@asynccontextmanager
async def served(agent: Agent, binding: str, telemetry: Telemetry) -> AsyncIterator[str]:
    """`agent` on uvicorn (and gRPC, for that binding) in this event loop: its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    grpc_port = free_port() if binding == GRPC_BINDING else None
    address = None if grpc_port is None else f"127.0.0.1:{grpc_port}"
    service = AgentService(agent.executor(), agent.card(url, grpc_address=address))
    app = observe_app(build_app(service), telemetry)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        lifespan="on",
        log_config=None,
        log_level="warning",
        http="h11",
        ws="none",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if serving.done():
                raise RuntimeError("uvicorn did not start")
            await asyncio.sleep(0.01)
        if grpc_port is None:
            yield url
        else:
            grpc_server = observe_grpc(GrpcServer(service, port=grpc_port), telemetry)
            async with grpc_server:
                yield url
    finally:
        server.should_exit = True
        await serving


@asynccontextmanager
async def chain(binding: str, telemetry: Telemetry) -> AsyncIterator[str]:
    """A → B → C served: A's URL."""
    async with AsyncExitStack() as stack:
        c = await stack.enter_async_context(served(relay("C", None, binding), binding, telemetry))
        b = await stack.enter_async_context(served(relay("B", c, binding), binding, telemetry))
        yield await stack.enter_async_context(served(relay("A", b, binding), binding, telemetry))
