"""The inside of an `AgentService`, observed: the agent's runs (`ObservedExecutor`: a span
per run, child of the request that started it, and its duration) and the task store's
calls (`ObservedStore`: a client span per call and its latency). Both decorate the
protocol objects the service already holds; `observe_service` puts them in place.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Tracer

from parley.model import ListTasksRequest, Task, TaskEvent
from parley.observability.instruments import (
    CONTEXT_ID,
    STORE_OPERATION,
    TASK_ID,
    Instruments,
)
from parley.server.execution import AgentExecutor, EventSink, RequestContext
from parley.server.stores.base import InlineConfigs, Scope, StoredTask, TaskPage, TaskStore


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


class ObservedStore:
    """`store`, each call in a client span named `store OPERATION` with its latency."""

    def __init__(self, store: TaskStore, tracer: Tracer, instruments: Instruments) -> None:
        self.store = store
        self.tracer = tracer
        self.instruments = instruments
        self.system = type(store).__name__

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _span(self, operation: str, task_id: str) -> trace.Span:
        attributes = {STORE_OPERATION: operation, "db.system.name": self.system}
        if task_id:
            attributes[TASK_ID] = task_id
        return self.tracer.start_span(
            f"store {operation}", kind=trace.SpanKind.CLIENT, attributes=attributes
        )

    def _done(self, operation: str, started: float) -> None:
        elapsed = time.perf_counter() - started
        self.instruments.store_duration.record(elapsed, {STORE_OPERATION: operation})

    async def create(self, scope: Scope, task: Task, *, configs: InlineConfigs = ()) -> StoredTask:
        started = time.perf_counter()
        with trace.use_span(self._span("create", task.id), end_on_exit=True):
            try:
                return await self.store.create(scope, task, configs=configs)
            finally:
                self._done("create", started)

    async def get(
        self, scope: Scope, task_id: str, *, history_length: int | None = None
    ) -> StoredTask | None:
        started = time.perf_counter()
        with trace.use_span(self._span("get", task_id), end_on_exit=True):
            try:
                return await self.store.get(scope, task_id, history_length=history_length)
            finally:
                self._done("get", started)

    async def save(
        self, scope: Scope, task: Task, events: Sequence[TaskEvent], expected_version: int
    ) -> StoredTask:
        started = time.perf_counter()
        with trace.use_span(self._span("save", task.id), end_on_exit=True):
            try:
                return await self.store.save(scope, task, events, expected_version)
            finally:
                self._done("save", started)

    async def list(self, scope: Scope, request: ListTasksRequest, page_size: int) -> TaskPage:
        started = time.perf_counter()
        with trace.use_span(self._span("list", ""), end_on_exit=True):
            try:
                return await self.store.list(scope, request, page_size)
            finally:
                self._done("list", started)


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
