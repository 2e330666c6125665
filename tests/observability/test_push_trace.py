"""A push delivery continues the trace of the request that caused it: the notification
records the W3C trace context of its write, on every backend, and the delivery sends it
as `traceparent` (the notification id sent stays the plain id)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from parley.observability import build
from parley.observability.providers import span_exporter_processor
from parley.observability.serving import observed_handler
from parley.server.push.outbox import TRACE_MARK
from tests.contracts.conftest import BACKENDS, _url
from tests.push.receiver import Receiver
from tests.push.support import Gated, config, run, service_for, start_task, until


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from _url(request.param, tmp_path)


def test_deliveries_carry_the_traceparent_of_the_sending_request(store_url: str) -> None:
    exporter = InMemorySpanExporter()
    telemetry = build([span_exporter_processor(exporter)])
    gated = Gated()

    async def scenario() -> tuple[str, list[dict[str, str]], str]:
        async with Receiver() as receiver:
            service = service_for(store_url, gated.agent)
            observed_handler(service, telemetry)  # before the worker starts
            await service.startup()
            try:
                with telemetry.tracer.start_as_current_span("request") as request:
                    task = await start_task(service, config(receiver.url()))
                trace_id = format(request.get_span_context().trace_id, "032x")
                gated.go.set()
                await until(service, lambda: len(receiver.answered()) >= 2, what="two sent")
            finally:
                await service.shutdown()
            return trace_id, [each.headers for each in receiver.answered()], task.id

    trace_id, sent, task_id = run(scenario())
    first = sent[0]
    version, traced, parent, flags = first["traceparent"].split("-")
    assert (version, traced) == ("00", trace_id)
    assert int(flags, 16) & 1  # sampled
    store_spans = {
        format(span.context.span_id, "016x")
        for span in exporter.get_finished_spans()
        if span.name == "store create" and span.context is not None
    }
    assert parent in store_spans  # the write that recorded it is its parent
    assert first["webhook-id"] == f"{task_id}.1.0"  # the id sent: no trace context in it
    assert all(TRACE_MARK not in each["webhook-id"] for each in sent)


def test_without_telemetry_nothing_is_sent_or_recorded(tmp_path: Path) -> None:
    gated = Gated()

    async def scenario() -> list[dict[str, str]]:
        async with Receiver() as receiver:
            service = service_for(next(_url("sqlite", tmp_path)), gated.agent)
            await service.startup()
            try:
                await start_task(service, config(receiver.url()))
                gated.go.set()
                await until(service, lambda: len(receiver.answered()) >= 1, what="one sent")
            finally:
                await service.shutdown()
            return [each.headers for each in receiver.answered()]

    sent = run(scenario())
    assert all("traceparent" not in each for each in sent)
