"""The bus between replicas, observed: a run's lease claim and a cancel's stop request on
the machine's Redis (a key prefix of the test's own) are client spans of the request that
made them, each timed in `parley.bus.duration`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from parley.model import CancelTaskRequest, Task, TaskState
from parley.observability import build
from parley.observability.providers import span_exporter_processor
from parley.observability.serving import observed_handler
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.redis_bus import RedisBus
from parley.server.service import AgentService
from parley.server.stores.urls import open_store
from parley.server.task_context import TaskContext
from tests.server.support import run, send

REDIS = "redis://127.0.0.1:6379/0"
CTX = CallContext()


@pytest.fixture
def prefix() -> Iterator[str]:
    name = f"parley-test-{uuid.uuid4().hex[:10]}"
    yield name

    async def clean() -> None:
        client = aioredis.from_url(REDIS)
        keys = [key async for key in client.scan_iter(match=f"{name}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()

    asyncio.run(clean())


def _waiting_agent() -> Agent:
    agent = Agent("Waiting")

    @agent.skill()
    async def wait(task: TaskContext) -> AsyncIterator[str]:
        """Works until canceled."""
        await asyncio.Event().wait()
        yield "never"

    return agent


def _durations(reader: InMemoryMetricReader) -> dict[str, int]:
    data = reader.get_metrics_data()
    found: dict[str, int] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "parley.bus.duration":
                    for point in metric.data.data_points:
                        assert isinstance(point, HistogramDataPoint)
                        operation = str((point.attributes or {})["parley.bus.operation"])
                        found[operation] = point.count
    return found


def test_bus_calls_are_client_spans_of_the_request_and_timed(prefix: str) -> None:
    exporter = InMemorySpanExporter()
    reader = InMemoryMetricReader()
    telemetry = build([span_exporter_processor(exporter)], [reader])
    agent = _waiting_agent()

    async def scenario() -> tuple[int, int]:
        tasks, configs = open_store("memory")
        bus = RedisBus(REDIS, prefix=prefix)
        service = AgentService(
            agent.executor(), agent.card("http://test"), store=tasks, push_store=configs,
            broker=bus,
        )  # fmt: skip
        observed_handler(service, telemetry)
        await service.startup()
        try:
            with telemetry.tracer.start_as_current_span("send") as sending:
                task = await service.send_message(CTX, send(return_immediately=True))
            assert isinstance(task, Task)
            with telemetry.tracer.start_as_current_span("cancel") as canceling:
                canceled = await service.cancel_task(CTX, CancelTaskRequest(id=task.id))
            assert canceled.status.state is TaskState.CANCELED
        finally:
            await service.shutdown()
        return sending.get_span_context().span_id, canceling.get_span_context().span_id

    send_span, cancel_span = run(scenario())
    spans = {span.name: span for span in exporter.get_finished_spans()}
    claim, stop = spans["bus claim"], spans["bus request_stop"]
    assert claim.kind is SpanKind.CLIENT
    assert stop.kind is SpanKind.CLIENT
    assert claim.parent is not None
    assert stop.parent is not None
    assert claim.parent.span_id == send_span
    assert stop.parent.span_id == cancel_span
    assert claim.attributes is not None
    assert claim.attributes["a2a.task.id"]
    counted = _durations(reader)
    assert counted["claim"] >= 1
    assert counted["request_stop"] >= 1
