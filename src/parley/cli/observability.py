"""`parley serve --otel` and `--metrics` (`parley.observability`, the `otel` extra), and
`/readyz` (`parley.asgi.readiness`, always served).

`--otel`: traces and metrics exported as the standard `OTEL_*` variables say
(`OTEL_TRACES_EXPORTER=otlp|console|none`, `OTEL_EXPORTER_OTLP_ENDPOINT`, ...), and the
W3C trace context sent on every call the agent makes. `--metrics`: the same metrics
scraped by Prometheus at `/metrics`. Without either nothing is wrapped. In a `--config`
file: `otel = true`, `metrics = true`.
"""

from __future__ import annotations

import argparse
from typing import Any

from parley.asgi.app import A2AApp
from parley.asgi.mount import Mounted
from parley.asgi.readiness import Readiness
from parley.server.readiness import Probe, redis_probe, store_probe

EXTRA = "parley serve --otel and --metrics need the otel extra: pip install 'parley-a2a[otel]'"


def add_observability_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--otel",
        action="store_true",
        default=False,
        help="OpenTelemetry traces and metrics, exported as the OTEL_* variables say "
        "(OTEL_TRACES_EXPORTER=otlp|console|none, OTEL_EXPORTER_OTLP_ENDPOINT, ...)",
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        default=False,
        help="serve the metrics in the Prometheus text format at /metrics",
    )


def _probes(app: Any, bus: str | None) -> dict[str, Probe]:
    probes: dict[str, Probe] = {}
    if isinstance(app, A2AApp):
        store = getattr(app.settings.handler, "store", None)
        if store is not None:
            probes["store"] = store_probe(store)
    elif isinstance(app, Mounted):
        for name, agent in app.apps.items():
            store = getattr(agent.settings.handler, "store", None)
            if store is not None:
                probes[f"store:{name}"] = store_probe(store)
    if bus:
        probes["bus"] = redis_probe(bus)
    return probes


def telemetry(arguments: argparse.Namespace) -> Any:
    """The command's Telemetry (built once), or None without --otel and --metrics."""
    otel, metrics = getattr(arguments, "otel", False), getattr(arguments, "metrics", False)
    if not (otel or metrics):
        return None
    built = getattr(arguments, "built_telemetry", None)
    if built is None:
        try:
            from parley.observability import from_environment, observe_clients  # noqa: PLC0415
        except ImportError:
            raise SystemExit(EXTRA) from None
        try:
            built = from_environment(traces=otel, prometheus=metrics)
        except ValueError as exc:
            raise SystemExit(f"parley serve: --otel: {exc}") from None
        if otel:
            observe_clients(built)
        arguments.built_telemetry = built
    return built


def observed(app: Any, arguments: argparse.Namespace) -> Any:
    """The ASGI app `parley serve` runs: `/readyz` answered, and, with --otel or
    --metrics, each request traced and counted."""
    probes = _probes(app, getattr(arguments, "bus", None))
    chosen = telemetry(arguments)
    if chosen is not None:
        from parley.observability import observe_app  # noqa: PLC0415

        app = observe_app(app, chosen, shutdown_with_app=True)
    return Readiness(app, probes)


def observed_grpc(server: Any, arguments: argparse.Namespace) -> Any:
    """The command's GrpcServer, with --otel or --metrics each call traced and counted."""
    chosen = telemetry(arguments)
    if chosen is None:
        return server
    from parley.observability import observe_grpc  # noqa: PLC0415

    return observe_grpc(server, chosen)
