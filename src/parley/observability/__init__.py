"""OpenTelemetry for a served agent (the `otel` extra): a server span per request on every
binding, with the A2A attributes; spans for the agent's runs and the task store's calls;
client spans and W3C trace context on every outgoing call; request, stream, task, run and
store metrics, exported over OTLP, printed, or scraped by Prometheus at `/metrics`.

`parley serve --otel` (and `--metrics`) builds a `Telemetry` and wraps the app, the gRPC
server and the clients with it; without them nothing is wrapped. An application serving
its own app does the same:

    telemetry = from_environment()
    app = observe_app(build_app(service), telemetry, shutdown_with_app=True)
    undo = observe_clients(telemetry)
"""

from __future__ import annotations

try:
    import opentelemetry.sdk  # noqa: F401
    import prometheus_client  # noqa: F401
except ImportError as exc:  # the one line naming the extra (STYLE 12)
    raise ImportError(
        "parley.observability needs the otel extra: pip install 'parley-a2a[otel]'"
    ) from exc

from parley.observability.providers import Telemetry, build, from_environment
from parley.observability.serving import observe_app, observe_clients, observe_grpc

__all__ = [
    "Telemetry",
    "build",
    "from_environment",
    "observe_app",
    "observe_clients",
    "observe_grpc",
]
