"""`from_environment` and its exporters as the `OTEL_*` variables name them: console,
otlp, none, unknown names refused; without traces, only the metrics kept."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import generate_latest

from parley.observability.providers import (
    _metric_readers,
    _span_processors,
    build,
    from_environment,
    named,
    span_exporter_processor,
)


def test_console_exporters_as_the_variables_name_them() -> None:
    environ = {"OTEL_TRACES_EXPORTER": " Console , none", "OTEL_METRICS_EXPORTER": "console"}
    (processor,) = _span_processors(environ)
    assert isinstance(processor, SimpleSpanProcessor)
    assert isinstance(processor.span_exporter, ConsoleSpanExporter)
    (reader,) = _metric_readers(environ)
    assert isinstance(reader, PeriodicExportingMetricReader)
    assert isinstance(reader._exporter, ConsoleMetricExporter)
    reader.shutdown()
    telemetry = from_environment(environ={**environ, "OTEL_METRICS_EXPORTER": "none"})
    span = telemetry.tracer.start_span("recorded")
    assert span.is_recording()
    span.end()
    assert telemetry.registry is None
    telemetry.shutdown()


def test_none_exports_nothing() -> None:
    environ = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none,"}
    assert _span_processors(environ) == []
    assert _metric_readers(environ) == []


def test_otlp_is_the_default_exporter() -> None:
    (processor,) = _span_processors({})
    assert isinstance(processor, BatchSpanProcessor)
    assert isinstance(processor.span_exporter, OTLPSpanExporter)
    processor.shutdown()  # type: ignore[no-untyped-call]
    (reader,) = _metric_readers({"OTEL_METRICS_EXPORTER": "OTLP"})
    assert isinstance(reader, PeriodicExportingMetricReader)
    assert isinstance(reader._exporter, OTLPMetricExporter)
    reader.shutdown()


def test_an_unknown_exporter_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="OTEL_TRACES_EXPORTER: 'jaeger' is not otlp"):
        from_environment(environ={"OTEL_TRACES_EXPORTER": "jaeger"})
    environ = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "statsd"}
    with pytest.raises(ValueError, match="OTEL_METRICS_EXPORTER: 'statsd' is not otlp"):
        from_environment(environ=environ)


def test_without_traces_only_the_prometheus_metrics_are_kept() -> None:
    # the exporter variables are not even read: an unknown one is no error
    telemetry = from_environment(
        traces=False, prometheus=True, environ={"OTEL_TRACES_EXPORTER": "jaeger"}
    )
    span = telemetry.tracer.start_span("dropped")
    assert not span.is_recording()
    span.end()
    telemetry.meter.create_counter("kept.counter").add(2)
    assert telemetry.registry is not None
    assert b"kept_counter" in generate_latest(telemetry.registry)
    telemetry.shutdown()


def test_a_named_resource_keeps_its_name() -> None:
    mine = Resource({"service.name": "mine"})
    assert named(mine) is mine
    assert named(Resource({})).attributes["service.name"] == "parley"
    unknown = Resource({"service.name": "unknown_service:python"})
    assert named(unknown).attributes["service.name"] == "parley"


def test_a_span_exporter_processor_hands_each_span_over_at_once() -> None:
    exporter = InMemorySpanExporter()
    telemetry = build([span_exporter_processor(exporter)])
    telemetry.tracer.start_span("handed").end()
    assert [span.name for span in exporter.get_finished_spans()] == ["handed"]
    telemetry.shutdown()
