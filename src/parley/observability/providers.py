"""`Telemetry`: the OpenTelemetry tracer and meter providers a served agent reports to, and
the instruments it records. `from_environment` configures them from the standard `OTEL_*`
variables; tests build one over an in-memory exporter. Nothing here is global: the
providers belong to the Telemetry, which the CLI (or the application) builds at the edge
and hands to the wrappers of this package.

Exporters (`OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER`, comma-separated): `otlp`
(OTLP over HTTP/protobuf; endpoint, headers and timeout from `OTEL_EXPORTER_OTLP_*`),
`console` (spans and metrics printed on standard output) or `none`. The resource comes
from `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, the sampler from
`OTEL_TRACES_SAMPLER`, the batching from `OTEL_BSP_*`: the SDK reads them itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from opentelemetry.metrics import Meter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider, sampling
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Tracer
from prometheus_client import CollectorRegistry

from parley.observability.instruments import SCOPE, Instruments

DEFAULT_SERVICE_NAME = "parley"


@dataclass(eq=False)
class Telemetry:
    """The providers a server reports to, its instruments, and, with `registry`, the
    Prometheus registry `/metrics` answers from. `shutdown` flushes and closes them."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    registry: CollectorRegistry | None = None
    tracer: Tracer = field(init=False)
    meter: Meter = field(init=False)
    instruments: Instruments = field(init=False)

    def __post_init__(self) -> None:
        self.tracer = self.tracer_provider.get_tracer(SCOPE)
        self.meter = self.meter_provider.get_meter(SCOPE)
        self.instruments = Instruments(self.meter)

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


def _names(environ: Mapping[str, str], variable: str, default: str) -> list[str]:
    value = environ.get(variable, default)
    return [name.strip().lower() for name in value.split(",") if name.strip()]


def _span_processors(environ: Mapping[str, str]) -> list[SpanProcessor]:
    processors: list[SpanProcessor] = []
    for name in _names(environ, "OTEL_TRACES_EXPORTER", "otlp"):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )

            processors.append(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            processors.append(SimpleSpanProcessor(ConsoleSpanExporter()))
        elif name != "none":
            raise ValueError(f"OTEL_TRACES_EXPORTER: {name!r} is not otlp, console or none")
    return processors


def _metric_readers(environ: Mapping[str, str]) -> list[MetricReader]:
    readers: list[MetricReader] = []
    for name in _names(environ, "OTEL_METRICS_EXPORTER", "otlp"):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # noqa: PLC0415
                OTLPMetricExporter,
            )

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        elif name == "console":
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
        elif name != "none":
            raise ValueError(f"OTEL_METRICS_EXPORTER: {name!r} is not otlp, console or none")
    return readers


def named(resource: Resource) -> Resource:
    """The resource, named `parley` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES`
    named it (the SDK's default is `unknown_service`)."""
    name = str(resource.attributes.get("service.name", ""))
    if name and not name.startswith("unknown_service"):
        return resource
    return resource.merge(Resource({"service.name": DEFAULT_SERVICE_NAME}))


def prometheus_reader() -> tuple[MetricReader, CollectorRegistry]:
    """A metric reader that a Prometheus scrape collects, with its own registry."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader  # noqa: PLC0415

    registry = CollectorRegistry()
    return PrometheusMetricReader(registry=registry), registry


def build(
    span_processors: Sequence[SpanProcessor] = (),
    metric_readers: Sequence[MetricReader] = (),
    *,
    prometheus: bool = False,
    resource: Resource | None = None,
    traces: bool = True,
) -> Telemetry:
    """A Telemetry over these processors and readers (and a Prometheus reader, with
    `prometheus`): what tests build over in-memory exporters. Without `traces`, spans are
    not recorded at all (the metrics only)."""
    resource = resource or named(Resource.create())
    readers = list(metric_readers)
    registry = None
    if prometheus:
        reader, registry = prometheus_reader()
        readers.append(reader)
    sampler = None if traces else sampling.ALWAYS_OFF
    tracer_provider = TracerProvider(sampler=sampler, resource=resource)
    for processor in span_processors:
        tracer_provider.add_span_processor(processor)
    meter_provider = MeterProvider(metric_readers=readers, resource=resource)
    return Telemetry(tracer_provider, meter_provider, registry)


def from_environment(
    *, traces: bool = True, prometheus: bool = False, environ: Mapping[str, str] | None = None
) -> Telemetry:
    """A Telemetry configured from the `OTEL_*` variables (with `traces`; without, the
    spans go nowhere and only `prometheus` metrics are kept). A ValueError names an
    exporter that is not known."""
    environ = os.environ if environ is None else environ
    if not traces:
        return build(prometheus=prometheus, traces=False)
    return build(_span_processors(environ), _metric_readers(environ), prometheus=prometheus)


def span_exporter_processor(exporter: SpanExporter) -> SpanProcessor:
    """A processor that hands each ended span to `exporter` at once (tests)."""
    return SimpleSpanProcessor(exporter)
