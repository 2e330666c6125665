"""Putting the wrappers in place: `observe_app` (an ASGI app of `build_app` or
`mount_agents`: its handlers observed, a server span per request), `observe_grpc` (a
`GrpcServer`: the interceptor and its handler observed) and `observe_clients` (every
Parley client: a span per operation; every httpx and `grpc.aio` client of the process: a
client span per request and the W3C trace context sent along, so that a call an agent
makes while working continues its trace).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from parley.asgi.app import A2AApp
from parley.asgi.mount import Mounted
from parley.client.transport import transport_wrappers
from parley.observability.asgi import ASGIApp, ObservedApp
from parley.observability.client import wrapper
from parley.observability.handler import ObservedHandler
from parley.observability.providers import Telemetry
from parley.observability.service import observe_service
from parley.server.handler import RequestHandler


def observed_handler(handler: RequestHandler, telemetry: Telemetry) -> RequestHandler:
    """`handler` described and counted, its agent runs and store calls traced."""
    if isinstance(handler, ObservedHandler):
        return handler
    observe_service(handler, telemetry.tracer, telemetry.instruments)
    return ObservedHandler(handler, telemetry.instruments)


def _observe_a2a(app: A2AApp, telemetry: Telemetry) -> str:
    app.settings = replace(app.settings, handler=observed_handler(app.settings.handler, telemetry))
    return app.jsonrpc_path


def observe_app(app: ASGIApp, telemetry: Telemetry, *, shutdown_with_app: bool = False) -> Any:
    """`app` with a server span per HTTP request; the handlers of an A2AApp, or of each
    agent of a Mounted app, observed. Any other ASGI app gets the spans only."""
    paths: set[str] = set()
    if isinstance(app, A2AApp):
        paths.add(_observe_a2a(app, telemetry))
    elif isinstance(app, Mounted):
        for name, agent in app.apps.items():
            path = f"/{name}{_observe_a2a(agent, telemetry)}"
            paths.update({path, path.rstrip("/")})
    return ObservedApp(app, telemetry, paths, shutdown_with_app=shutdown_with_app)


def observe_grpc(server: Any, telemetry: Telemetry) -> Any:
    """A `GrpcServer` (not started yet) with a server span per call, its servicers'
    handler observed."""
    from parley.observability.grpc import ObservedInterceptor  # noqa: PLC0415 - grpc extra

    for servicer in server.servicers:
        handler = observed_handler(servicer.settings.handler, telemetry)
        servicer.settings = replace(servicer.settings, handler=handler)
    server.interceptors = [*server.interceptors, ObservedInterceptor(telemetry)]
    return server


def observe_clients(telemetry: Telemetry) -> Callable[[], None]:
    """Instrument every Parley client made from now on in this context and the tasks it
    starts (a client span per operation, named after its A2A method), and every httpx
    client (and `grpc.aio` channel, with the grpc extra) of the process, whose spans are
    children of those; the function returned undoes it (in the same context)."""
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor  # noqa: PLC0415

    undo: list[Callable[[], None]] = []
    token = transport_wrappers.set((*transport_wrappers.get(), wrapper(telemetry.tracer)))
    undo.append(lambda: transport_wrappers.reset(token))
    httpx_instrumentor = HTTPXClientInstrumentor()
    httpx_instrumentor.instrument(tracer_provider=telemetry.tracer_provider)
    undo.append(httpx_instrumentor.uninstrument)
    try:
        from opentelemetry.instrumentation.grpc import (  # noqa: PLC0415
            GrpcAioInstrumentorClient,
        )
    except ImportError:  # no grpcio: no gRPC client to instrument
        pass
    else:
        grpc_instrumentor = GrpcAioInstrumentorClient()  # type: ignore[no-untyped-call]
        grpc_instrumentor.instrument(tracer_provider=telemetry.tracer_provider)
        undo.append(grpc_instrumentor.uninstrument)

    def uninstrument() -> None:
        for step in reversed(undo):
            step()

    return uninstrument
