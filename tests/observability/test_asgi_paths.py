"""`ObservedApp` around a tiny ASGI app: the lifespan closing the telemetry, a server
error marked on its span, a bare scope's attributes, and `/metrics` without a registry."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from parley.observability import build
from parley.observability.asgi import ObservedApp, Receive, Scope, Send

pytestmark = pytest.mark.anyio

Message = Any


class Closed(SpanProcessor):
    """Remembers that its provider was shut down."""

    def __init__(self) -> None:
        self.closed = False

    def shutdown(self) -> None:
        self.closed = True


class Inner:
    """Answers every request with `status`, and a lifespan as an ASGI server expects."""

    name = "the inner app"

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.scopes: list[Scope] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scopes.append(scope)
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await send({"type": "http.response.start", "status": self.status, "headers": []})
        await send({"type": "http.response.body", "body": b"inner"})


async def _run(app: ObservedApp, scope: Scope, inbox: list[Message]) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return inbox.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def test_the_lifespan_ending_shuts_the_telemetry_down() -> None:
    closed = Closed()
    telemetry = build([closed], [])
    app = ObservedApp(Inner(), telemetry, {"/"}, shutdown_with_app=True)
    inbox: list[Message] = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent = await _run(app, {"type": "lifespan"}, inbox)
    assert [message["type"] for message in sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]
    assert closed.closed


async def test_without_shutdown_with_app_the_lifespan_leaves_the_telemetry_open() -> None:
    closed = Closed()
    telemetry = build([closed], [])
    app = ObservedApp(Inner(), telemetry, {"/"})
    inbox: list[Message] = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    await _run(app, {"type": "lifespan"}, inbox)
    assert not closed.closed
    telemetry.shutdown()
    assert closed.closed


async def test_a_server_error_marks_a_bare_requests_span() -> None:
    spans = InMemorySpanExporter()
    telemetry = build([SimpleSpanProcessor(spans)], [])
    app = ObservedApp(Inner(status=503), telemetry, {"/"})
    scope = {"type": "http", "path": "/tasks", "headers": []}
    sent = await _run(app, scope, [{"type": "http.request", "body": b""}])
    assert sent[0]["status"] == 503
    (span,) = spans.get_finished_spans()
    assert span.name == "HTTP"
    assert span.kind is SpanKind.SERVER
    assert span.status.status_code is StatusCode.ERROR
    assert dict(span.attributes or {}) == {
        "http.request.method": "",
        "url.path": "/tasks",
        "url.scheme": "http",
        "network.protocol.version": "",
        "http.response.status_code": 503,
    }
    telemetry.shutdown()


async def test_a_client_error_leaves_the_span_unset() -> None:
    spans = InMemorySpanExporter()
    telemetry = build([SimpleSpanProcessor(spans)], [])
    app = ObservedApp(Inner(status=404), telemetry, {"/"})
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/tasks/x",
        "scheme": "https",
        "http_version": "1.1",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5555),
        "headers": [(b"User-Agent", b"probe/1"), (b"x-a", b"1"), (b"x-a", b"2")],
    }
    await _run(app, scope, [{"type": "http.request", "body": b""}])
    (span,) = spans.get_finished_spans()
    assert span.name == "GET"
    assert span.status.status_code is StatusCode.UNSET
    attributes = dict(span.attributes or {})
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["server.port"] == 8000
    assert attributes["client.address"] == "127.0.0.1"
    assert attributes["user_agent.original"] == "probe/1"
    assert attributes["http.response.status_code"] == 404
    telemetry.shutdown()


async def test_metrics_without_a_registry_are_the_apps_and_untraced() -> None:
    spans = InMemorySpanExporter()
    telemetry = build([SimpleSpanProcessor(spans)], [])
    assert telemetry.registry is None
    inner = Inner()
    app = ObservedApp(inner, telemetry, {"/"})
    scope = {"type": "http", "method": "GET", "path": "/metrics", "headers": []}
    sent = await _run(app, scope, [{"type": "http.request", "body": b""}])
    assert sent[1]["body"] == b"inner"
    assert inner.scopes == [scope]
    assert spans.get_finished_spans() == ()
    telemetry.shutdown()


def test_other_attributes_are_the_apps() -> None:
    telemetry = build()
    app = ObservedApp(Inner(), telemetry, {"/"})
    assert app.name == "the inner app"
    with pytest.raises(AttributeError):
        _ = app.missing
    telemetry.shutdown()
