"""`ObservedApp`: pure-ASGI middleware that opens the server span of each HTTP request
(HTTP semantic conventions, parent taken from the W3C `traceparent` / `tracestate`
headers), tells the handler wrapper which binding the request arrived on, and, with a
Prometheus registry, answers `GET /metrics` with the text exposition format.

Health and readiness probes and the scrape itself are not traced: a load balancer's
polling would drown the traces that matter.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any

from opentelemetry import propagate, trace
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from parley.observability.instruments import HTTP_JSON, JSONRPC, arrived_on
from parley.observability.providers import Telemetry

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

METRICS_PATH = "/metrics"
UNTRACED = frozenset({"/healthz", "/readyz", METRICS_PATH})
_SERVER_ERROR = 500


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]},{text}" if key in headers else text
    return headers


def _attributes(scope: Scope, headers: dict[str, str]) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "http.request.method": scope.get("method", ""),
        "url.path": scope.get("path", ""),
        "url.scheme": scope.get("scheme", "http"),
        "network.protocol.version": scope.get("http_version", ""),
    }
    server, client = scope.get("server"), scope.get("client")
    if server:
        attributes["server.address"], attributes["server.port"] = server[0], server[1]
    if client:
        attributes["client.address"] = client[0]
    if "user-agent" in headers:
        attributes["user_agent.original"] = headers["user-agent"]
    return attributes


class ObservedApp:
    """`app` with a server span per HTTP request. `jsonrpc_paths`: where a POST is a
    JSON-RPC call (any other request is HTTP+JSON). `shutdown_with_app`: flush and close
    the telemetry when the app's lifespan ends (a process serving one app)."""

    def __init__(
        self,
        app: ASGIApp,
        telemetry: Telemetry,
        jsonrpc_paths: Collection[str],
        *,
        shutdown_with_app: bool = False,
    ) -> None:
        self.app = app
        self.telemetry = telemetry
        self.jsonrpc_paths = frozenset(jsonrpc_paths)
        self.shutdown_with_app = shutdown_with_app

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan" and self.shutdown_with_app:
            await self.app(scope, receive, self._closing(send))
        elif kind != "http" or scope.get("path") in UNTRACED:
            if scope.get("path") == METRICS_PATH and scope.get("method") == "GET":
                await self._metrics(scope, receive, send)
            else:
                await self.app(scope, receive, send)
        else:
            await self._traced(scope, receive, send)

    def _closing(self, send: Send) -> Send:
        async def closing(message: Message) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                self.telemetry.shutdown()
            await send(message)

        return closing

    async def _traced(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        method = scope.get("method", "")
        post = method == "POST" and scope.get("path") in self.jsonrpc_paths
        token = arrived_on.set(JSONRPC if post else HTTP_JSON)
        parent = propagate.extract(headers)
        span = self.telemetry.tracer.start_span(
            method or "HTTP",
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=_attributes(scope, headers),
        )

        async def observed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                span.set_attribute("http.response.status_code", status)
                if status >= _SERVER_ERROR:
                    span.set_status(trace.StatusCode.ERROR)
            await send(message)

        try:
            with trace.use_span(span, end_on_exit=True):
                await self.app(scope, receive, observed_send)
        finally:
            arrived_on.reset(token)

    async def _metrics(self, scope: Scope, receive: Receive, send: Send) -> None:
        registry = self.telemetry.registry
        if registry is None:
            await self.app(scope, receive, send)
            return
        body = generate_latest(registry)
        headers = [
            (b"content-type", CONTENT_TYPE_LATEST.encode()),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
