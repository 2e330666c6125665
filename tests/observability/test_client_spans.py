"""The Parley client's own span per operation: named after the A2A method, kind CLIENT,
with the A2A attributes, parent of the HTTP or gRPC request it makes; a stream's span
lasts until the stream ends. Without `observe_clients`, the transport is not wrapped."""

from __future__ import annotations

import pytest
from opentelemetry.trace import SpanKind

from parley.client import GRPC_BINDING, JSONRPC_BINDING, Client
from parley.client.transport import transport_wrappers
from parley.observability import build
from parley.observability.client import ObservedTransport
from tests.observability.chain import observed, relay, served

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("binding", [JSONRPC_BINDING, GRPC_BINDING])
async def test_a_stream_and_a_get_are_client_spans_over_their_requests(binding: str) -> None:
    async with observed() as telemetry:
        async with served(relay("C", None, binding), binding, telemetry.telemetry) as url:
            telemetry.spans.clear()
            with telemetry.telemetry.tracer.start_as_current_span("caller") as caller:
                async with Client.connect(url, bindings=[binding]) as client:
                    events = [event async for event in client.stream("hi")]
                    task_id = str(getattr(events[-1], "task_id", ""))
                    assert task_id
                    await client.get_task(task_id)
        finished = telemetry.spans.get_finished_spans()

    mine = {
        s.name: s
        for s in finished
        if s.kind is SpanKind.CLIENT and s.name.startswith("A2AService/")
    }
    assert set(mine) == {"A2AService/SendStreamingMessage", "A2AService/GetTask"}
    for name, span in mine.items():
        assert span.parent is not None
        assert span.parent.span_id == caller.get_span_context().span_id
        assert span.attributes is not None
        assert span.attributes["a2a.method"] == name.removeprefix("A2AService/")
        assert span.attributes["a2a.binding"] == binding
        assert span.attributes["a2a.task.id"] == task_id
        below = [s for s in finished if s.parent and s.parent.span_id == span.context.span_id]
        assert [s.kind for s in below] == [SpanKind.CLIENT]  # the HTTP or gRPC request
        served_by = [
            s for s in finished if s.parent and s.parent.span_id == below[0].context.span_id
        ]
        assert [s.name for s in served_by] == [name]  # the server's span of the operation
        assert served_by[0].kind is SpanKind.SERVER
    stream = mine["A2AService/SendStreamingMessage"]
    started = mine["A2AService/GetTask"].start_time
    assert stream.end_time is not None
    assert started is not None
    assert stream.end_time <= started  # it ended with the stream, before the next call


async def test_without_observe_clients_the_transport_is_the_clients_own() -> None:
    agent = relay("C", None, JSONRPC_BINDING)
    async with served(agent, JSONRPC_BINDING, build()) as url:
        async with Client.connect(url) as client:
            assert not isinstance(client.transport, ObservedTransport)
        async with observed(), Client.connect(url) as client:
            assert isinstance(client.transport, ObservedTransport)
        assert transport_wrappers.get() == ()  # undone
        async with Client.connect(url) as client:
            assert not isinstance(client.transport, ObservedTransport)
