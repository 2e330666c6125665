"""A bus between replicas (`RedisBus`, or any broker with `failover`), observed: each of
its calls to the other replicas (`claim`: the run's lease; `request_stop`: a cancel's ask
to the others; `replayable`: whether a resume can replay from the bus; `flush`: the
published events sent) in a client span named `bus OPERATION`, with its latency
(`parley.bus.duration`). The bus's own methods are wrapped on the instance, so whoever
holds it (service, runner, recovery) sees them; an in-process broker is left alone.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Tracer

from parley.observability.instruments import BUS_OPERATION, TASK_ID, Instruments

OPERATIONS = ("claim", "request_stop", "replayable", "flush")


def _observed(
    operation: str, call: Callable[..., Awaitable[Any]], tracer: Tracer, instruments: Instruments
) -> Callable[..., Awaitable[Any]]:
    name, labels = f"bus {operation}", {BUS_OPERATION: operation}

    @functools.wraps(call)
    async def observed(*args: Any, **kwargs: Any) -> Any:
        key = args[0] if args else None  # a TaskKey: (tenant, caller, task id)
        attributes = {TASK_ID: key[2]} if isinstance(key, tuple) and len(key) == 3 else None
        started = time.perf_counter()
        with tracer.start_as_current_span(name, kind=trace.SpanKind.CLIENT, attributes=attributes):
            try:
                return await call(*args, **kwargs)
            finally:
                instruments.bus_duration.record(time.perf_counter() - started, labels)

    observed.__dict__["observed"] = True
    return observed


def observe_bus(bus: Any, tracer: Tracer, instruments: Instruments) -> None:
    """Wrap the calls of `bus` (a broker with `failover`; once); any other is left as is."""
    if not getattr(bus, "failover", False) or getattr(bus.claim, "observed", False):
        return
    for operation in OPERATIONS:
        call = getattr(bus, operation, None)
        if call is not None:
            setattr(bus, operation, _observed(operation, call, tracer, instruments))
