"""One trace across three agents (A's skill calls B with the Parley client, B's calls C),
on each binding: every span shares the trace id, and each hop's server span is the child
of the client span that called it."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from parley.client import GRPC_BINDING, HTTP_JSON_BINDING, JSONRPC_BINDING, Client
from parley.model import Task
from tests.observability.chain import chain, observed

pytestmark = pytest.mark.anyio


def _parent(span: ReadableSpan, spans: dict[int, ReadableSpan]) -> ReadableSpan | None:
    return None if span.parent is None else spans.get(span.parent.span_id)


def _ancestors(span: ReadableSpan, spans: dict[int, ReadableSpan]) -> list[ReadableSpan]:
    found = []
    parent = _parent(span, spans)
    while parent is not None:
        found.append(parent)
        parent = _parent(parent, spans)
    return found


@pytest.mark.parametrize("binding", [JSONRPC_BINDING, HTTP_JSON_BINDING, GRPC_BINDING])
async def test_a_chain_of_three_agents_is_one_trace(binding: str) -> None:
    async with observed() as telemetry:
        async with chain(binding, telemetry.telemetry) as a:
            telemetry.spans.clear()  # the servers' start; the test's own trace begins here
            with telemetry.telemetry.tracer.start_as_current_span("caller"):
                async with Client.connect(a, bindings=[binding]) as client:
                    result = await client.send("hi")
        assert isinstance(result, Task)
        assert result.artifacts[0].text == "A:B:C:hi"
        finished = telemetry.spans.get_finished_spans()

    named = [s for s in finished if s.name == "A2AService/SendMessage"]
    sends = [s for s in named if s.kind is SpanKind.SERVER]
    assert len(sends) == 3, [s.name for s in finished]
    assert len({s.context.trace_id for s in finished if s.context}) == 1
    by_id = {s.context.span_id: s for s in finished if s.context}
    assert all(s.kind is SpanKind.SERVER for s in sends)
    assert {s.attributes["a2a.binding"] for s in sends if s.attributes} == {binding}
    assert all(s.attributes and s.attributes["a2a.task.id"] for s in sends)
    # A's server span is the root's child (the test's client); B's and C's hang below the
    # agent run of the agent before them, through that agent's client span.
    roots = [s for s in sends if not any(p in sends for p in _ancestors(s, by_id))]
    assert len(roots) == 1
    lower = [s for s in sends if s is not roots[0]]
    for server in lower:
        caller = _parent(server, by_id)
        assert caller is not None
        assert caller.kind is SpanKind.CLIENT
        runs = [p for p in _ancestors(server, by_id) if p.name == "agent run"]
        assert runs, f"{server.name} is not under an agent run"
    depth = sorted(len([p for p in _ancestors(s, by_id) if p in sends]) for s in sends)
    assert depth == [0, 1, 2]
    # Each hop's request is the child of the Parley client's span of the operation, named
    # after the A2A method, with its attributes; that span is the caller's (or run's) child.
    clients = [s for s in named if s.kind is SpanKind.CLIENT]
    assert len(clients) == 3
    for server in sends:
        request = _parent(server, by_id)
        assert request is not None
        operation = _parent(request, by_id)
        assert operation in clients, f"{request.name} is not under the client's span"
        assert operation.attributes is not None
        assert operation.attributes["a2a.method"] == "SendMessage"
        assert operation.attributes["a2a.binding"] == binding
        assert server.attributes is not None
        assert operation.attributes["a2a.task.id"] == server.attributes["a2a.task.id"]
        above = _parent(operation, by_id)
        assert above is not None
        assert above.name in {"caller", "agent run"}


async def test_store_calls_are_spans_of_their_request() -> None:
    async with observed() as telemetry:
        async with chain(JSONRPC_BINDING, telemetry.telemetry) as a:
            telemetry.spans.clear()
            with telemetry.telemetry.tracer.start_as_current_span("caller"):
                async with Client.connect(a, bindings=[JSONRPC_BINDING]) as client:
                    await client.send("hi")
        finished = telemetry.spans.get_finished_spans()
    stores = [s for s in finished if s.name.startswith("store ")]
    assert {s.name for s in stores} >= {"store create", "store save"}
    assert all(s.kind is SpanKind.CLIENT for s in stores)
    trace_ids = {s.context.trace_id for s in finished if s.context}
    assert len(trace_ids) == 1
