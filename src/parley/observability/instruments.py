"""What a served agent measures: the names of its span attributes and the metric
instruments it records (requests by method, status, version and binding; their latency;
open streams; task states reached; agent runs; store calls), and the binding a request
arrived on, which the edge wrappers set for the handler wrapper to read.
"""

from __future__ import annotations

from contextvars import ContextVar

from opentelemetry.metrics import Meter

SCOPE = "parley"
"""The instrumentation scope of every span and instrument."""

METHOD = "a2a.method"
VERSION = "a2a.protocol.version"
BINDING = "a2a.binding"
STATUS = "a2a.status"
TASK_ID = "a2a.task.id"
CONTEXT_ID = "a2a.context.id"
TASK_STATE = "a2a.task.state"
STORE_OPERATION = "parley.store.operation"
PUSH_OUTCOME = "parley.push.outcome"
BUS_OPERATION = "parley.bus.operation"

JSONRPC, HTTP_JSON, GRPC = "JSONRPC", "HTTP+JSON", "GRPC"
"""The bindings, spelled as the agent card's `protocolBinding`."""

arrived_on: ContextVar[str] = ContextVar("parley_binding", default="")
"""The binding of the request being served (set by the ASGI and gRPC wrappers)."""

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
"""Seconds: from a cache hit to a long agent run."""


class Instruments:
    """The instruments, made once per Telemetry on its meter."""

    def __init__(self, meter: Meter) -> None:
        self.requests = meter.create_counter(
            "a2a.server.requests",
            "{request}",
            "Requests served, by method, status, protocol version and binding",
        )
        self.duration = meter.create_histogram(
            "a2a.server.duration",
            "s",
            "How long a request took (a stream: until it ended)",
            explicit_bucket_boundaries_advisory=LATENCY_BUCKETS,
        )
        self.open_streams = meter.create_up_down_counter(
            "a2a.server.open_streams", "{stream}", "Streams open now, by method and binding"
        )
        self.task_states = meter.create_counter(
            "a2a.server.task_states",
            "{task}",
            "Task states answered or streamed, by state (a task counts once per state)",
        )
        self.agent_runs = meter.create_histogram(
            "a2a.agent.run.duration",
            "s",
            "How long the agent worked on a task, per run",
            explicit_bucket_boundaries_advisory=LATENCY_BUCKETS,
        )
        self.push_attempts = meter.create_counter(
            "parley.push.attempts",
            "{attempt}",
            "Push delivery attempts, by outcome: delivered, retry, dead_letter (given up), "
            "disabled (the webhook is gone)",
        )
        self.store_duration = meter.create_histogram(
            "parley.store.duration",
            "s",
            "How long a task-store call took, by operation",
            explicit_bucket_boundaries_advisory=LATENCY_BUCKETS,
        )
        self.bus_duration = meter.create_histogram(
            "parley.bus.duration",
            "s",
            "How long a call to the bus between replicas took, by operation",
            explicit_bucket_boundaries_advisory=LATENCY_BUCKETS,
        )
