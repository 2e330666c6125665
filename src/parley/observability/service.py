"""The inside of an `AgentService`, observed: the agent's runs (`ObservedExecutor`: a span
per run, child of the request that started it, and its duration), the task store's calls
(`ObservedStore`: a client span per call and its latency; a write's push notifications
record its trace context, which their deliveries send as `traceparent`) and the push deliveries
(`ObservedOutbox`: attempts by outcome). Each decorates a protocol object the service
already holds; `observe_service` puts them in place (before the service starts).
"""

from __future__ import annotations

import functools
import time
from typing import Any, ClassVar

from opentelemetry import trace
from opentelemetry.trace import Span, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from parley.model import Task
from parley.observability.bus import observe_bus
from parley.observability.instruments import (
    CONTEXT_ID,
    PUSH_OUTCOME,
    STORE_OPERATION,
    TASK_ID,
    Instruments,
)
from parley.server.execution import AgentExecutor, EventSink, RequestContext
from parley.server.push.outbox import TRACE_MARK, trace_context
from parley.server.stores.base import Scope, StoredTask, TaskPage, TaskStore


class ObservedExecutor:
    """`executor`, each run in an `agent run` span."""

    def __init__(self, executor: AgentExecutor, tracer: Tracer, instruments: Instruments) -> None:
        self.executor = executor
        self.tracer = tracer
        self.instruments = instruments

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        attributes = {TASK_ID: context.task_id, CONTEXT_ID: context.context_id}
        started = time.perf_counter()
        try:
            with self.tracer.start_as_current_span("agent run", attributes=attributes):
                await self.executor.execute(context, events)
        finally:
            self.instruments.agent_runs.record(time.perf_counter() - started)

    async def cancel(self, context: RequestContext) -> None:
        attributes = {TASK_ID: context.task_id}
        with self.tracer.start_as_current_span("agent cancel", attributes=attributes):
            await self.executor.cancel(context)


_W3C = TraceContextTextMapPropagator()
_WRITES = frozenset({"create", "save"})


def recorded_context(span: Span) -> str:
    """`span`'s W3C trace context as a store records it with a notification
    (`push.outbox.trace_context`); "" when the span is not sampled."""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier, trace.set_span_in_context(span))
    parent = carrier.get("traceparent")
    if parent is None:
        return ""
    state = "".join(carrier.get("tracestate", "").split())  # no whitespace, as sent
    return f"{TRACE_MARK}{parent}{TRACE_MARK}{state}"


_STORE_OPERATIONS = ("create", "get", "save", "list")
_STORE_SPANS = {operation: f"store {operation}" for operation in _STORE_OPERATIONS}
_STORE_LABELS = {operation: {STORE_OPERATION: operation} for operation in _STORE_OPERATIONS}


class ObservedStore:
    """`store`, each call of the TaskStore protocol in a client span named
    `store OPERATION`, with its latency. The arguments pass through as they are, so the
    wrapper follows the protocol as it grows; other attributes are the store's."""

    def __init__(self, store: TaskStore, tracer: Tracer, instruments: Instruments) -> None:
        self.store = store
        self.tracer = tracer
        self.instruments = instruments

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def _call(self, operation: str, task_id: object, *args: Any, **kwargs: Any) -> Any:
        labels = _STORE_LABELS[operation]
        span = self.tracer.start_span(
            _STORE_SPANS[operation],
            kind=trace.SpanKind.CLIENT,
            attributes={TASK_ID: task_id} if isinstance(task_id, str) and task_id else None,
        )
        started = time.perf_counter()
        token = None
        if operation in _WRITES and span.is_recording():  # its notifications continue it
            token = trace_context.set(functools.partial(recorded_context, span))
        with trace.use_span(span, end_on_exit=True):
            try:
                return await getattr(self.store, operation)(*args, **kwargs)
            finally:
                if token is not None:
                    trace_context.reset(token)
                self.instruments.store_duration.record(time.perf_counter() - started, labels)

    async def create(self, scope: Scope, task: Task, *args: Any, **kwargs: Any) -> StoredTask:
        stored: StoredTask = await self._call("create", task.id, scope, task, *args, **kwargs)
        return stored

    async def get(self, scope: Scope, task_id: str, *args: Any, **kwargs: Any) -> StoredTask | None:
        stored: StoredTask | None = await self._call(
            "get", task_id, scope, task_id, *args, **kwargs
        )
        return stored

    async def save(self, scope: Scope, task: Task, *args: Any, **kwargs: Any) -> StoredTask:
        stored: StoredTask = await self._call("save", task.id, scope, task, *args, **kwargs)
        return stored

    async def list(self, scope: Scope, *args: Any, **kwargs: Any) -> TaskPage:
        page: TaskPage = await self._call("list", None, scope, *args, **kwargs)
        return page


class ObservedOutbox:
    """A push outbox whose settled deliveries are counted by outcome (each settlement is
    one attempt); everything else is the outbox's."""

    OUTCOMES: ClassVar[dict[str, str]] = {
        "delivered": "delivered",
        "retry": "retry",
        "bury": "dead_letter",
        "disable": "disabled",
    }

    def __init__(self, outbox: Any, instruments: Instruments) -> None:
        self.outbox = outbox
        self.instruments = instruments

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.outbox, name)
        outcome = self.OUTCOMES.get(name)
        if outcome is None:
            return method

        async def settled(*args: Any, **kwargs: Any) -> Any:
            result = await method(*args, **kwargs)
            self.instruments.push_attempts.add(1, {PUSH_OUTCOME: outcome})
            return result

        return settled


def observe_service(service: Any, tracer: Tracer, instruments: Instruments) -> None:
    """Put the observed executor and store in place in an AgentService (any handler with
    a `runner` and a `store`); any other handler is left as it is."""
    runner = getattr(service, "runner", None)
    store = getattr(service, "store", None)
    if runner is None or store is None or isinstance(store, ObservedStore):
        return
    observed = ObservedStore(store, tracer, instruments)
    service.store = observed
    if getattr(runner, "store", None) is store:
        runner.store = observed
    runner.executor = ObservedExecutor(runner.executor, tracer, instruments)
    observe_bus(getattr(service, "broker", None), tracer, instruments)
    worker = getattr(service, "push_worker", None)
    if worker is not None:
        worker.outbox = ObservedOutbox(worker.outbox, instruments)
