"""The inside of an `AgentService`, observed (`parley.observability.service`), over
in-memory exporters: a client span and a latency per task-store call, named by operation
and carrying the task id; a write's trace context handed to the notifications it records
(and only a write's, only when sampled); a span per agent run and cancel; settled push
deliveries counted by outcome; `observe_service` putting each in place once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import (
    HistogramDataPoint,
    InMemoryMetricReader,
    NumberDataPoint,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from parley.model import ListTasksRequest, Task, TaskState, TaskStatus
from parley.observability import Telemetry, build
from parley.observability.service import (
    ObservedExecutor,
    ObservedOutbox,
    ObservedStore,
    observe_service,
    recorded_context,
)
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.execution import EventSink, RequestContext
from parley.server.push.outbox import TRACE_MARK, trace_context
from parley.server.stores.memory import InMemoryTaskStore
from parley.server.task_context import TaskContext
from tests.server.support import ALICE, as_task, run, send, serve, user

SCOPE = ("", "alice")


class Observed:
    def __init__(self, *, traces: bool = True) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        self.telemetry: Telemetry = build(
            [SimpleSpanProcessor(self.spans)], [self.metrics], traces=traces
        )

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def points(self, name: str) -> Iterator[tuple[dict[str, Any], Any]]:
        data = self.metrics.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            yield dict(point.attributes or {}), point


@pytest.fixture
def observed() -> Iterator[Observed]:
    made = Observed()
    yield made
    made.telemetry.shutdown()


def task(task_id: str = "t-1") -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.WORKING))


class Recording(InMemoryTaskStore):
    """The memory store, noting the trace context set while each call runs."""

    def __init__(self) -> None:
        super().__init__()
        self.contexts: list[tuple[str, str | None]] = []

    def _note(self, operation: str) -> None:
        make = trace_context.get()
        self.contexts.append((operation, None if make is None else make()))

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        self._note("create")
        return await super().create(*args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        self._note("get")
        return await super().get(*args, **kwargs)

    async def save(self, *args: Any, **kwargs: Any) -> Any:
        self._note("save")
        return await super().save(*args, **kwargs)


def observed_store(observed: Observed, inner: InMemoryTaskStore | None = None) -> ObservedStore:
    telemetry = observed.telemetry
    store = inner if inner is not None else Recording()  # an empty store is falsy (len 0)
    return ObservedStore(store, telemetry.tracer, telemetry.instruments)


def test_each_store_call_is_a_client_span_with_the_task_id(observed: Observed) -> None:
    store = observed_store(observed)

    async def main() -> None:
        stored = await store.create(SCOPE, task())
        await store.get(SCOPE, "t-1")
        await store.save(SCOPE, task(), (), stored.version)
        await store.list(SCOPE, ListTasksRequest(), 10)
        await store.get(SCOPE, "")

    run(main())
    spans = observed.finished()
    assert [s.name for s in spans] == [
        "store create",
        "store get",
        "store save",
        "store list",
        "store get",
    ]
    assert all(s.kind is SpanKind.CLIENT for s in spans)
    assert [dict(s.attributes or {}).get("a2a.task.id") for s in spans] == [
        "t-1",
        "t-1",
        "t-1",
        None,
        None,
    ]


def test_each_store_call_records_its_latency_by_operation(observed: Observed) -> None:
    store = observed_store(observed)

    async def main() -> None:
        await store.create(SCOPE, task())
        await store.get(SCOPE, "t-1")
        await store.get(SCOPE, "t-2")

    run(main())
    counts = {
        labels["parley.store.operation"]: point.count
        for labels, point in observed.points("parley.store.duration")
        if isinstance(point, HistogramDataPoint)
    }
    assert counts == {"create": 1, "get": 2}


def test_a_failed_store_call_is_still_timed_and_ended(observed: Observed) -> None:
    from parley.server.stores.base import StaleWriteError  # noqa: PLC0415

    store = observed_store(observed)

    async def main() -> None:
        await store.create(SCOPE, task())
        with pytest.raises(StaleWriteError):
            await store.create(SCOPE, task())

    run(main())
    assert [s.name for s in observed.finished()] == ["store create", "store create"]
    [(_, point)] = list(observed.points("parley.store.duration"))
    assert point.count == 2


def test_only_writes_hand_their_trace_context_to_notifications(observed: Observed) -> None:
    inner = Recording()
    store = observed_store(observed, inner)

    async def main() -> None:
        stored = await store.create(SCOPE, task())
        await store.get(SCOPE, "t-1")
        await store.save(SCOPE, task(), (), stored.version)

    run(main())
    by_operation = dict(inner.contexts)
    assert by_operation["get"] is None
    spans = {s.name: s for s in observed.finished()}
    for write in ("create", "save"):
        context = by_operation[write]
        assert context is not None
        _, parent, state = context.split(TRACE_MARK)
        own = spans[f"store {write}"].get_span_context()
        assert own is not None
        assert parent.startswith(f"00-{own.trace_id:032x}-{own.span_id:016x}-")
        assert state == ""
    assert trace_context.get() is None  # reset after each call


def test_an_unsampled_write_hands_no_context() -> None:
    unsampled = Observed(traces=False)
    inner = Recording()
    try:
        run(observed_store(unsampled, inner).create(SCOPE, task()))
    finally:
        unsampled.telemetry.shutdown()
    assert inner.contexts == [("create", None)]


def test_the_recorded_context_of_a_span_that_is_not_recording_is_empty() -> None:
    from opentelemetry.trace import INVALID_SPAN  # noqa: PLC0415

    assert recorded_context(INVALID_SPAN) == ""


def test_other_store_attributes_are_the_stores(observed: Observed) -> None:
    inner = Recording()
    store = observed_store(observed, inner)
    assert store.contexts is inner.contexts


class Executor:
    def __init__(self) -> None:
        self.runs: list[str] = []
        self.resumable = True

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        self.runs.append(context.task_id)

    async def cancel(self, context: RequestContext) -> None:
        self.runs.append("cancel " + context.task_id)


def test_runs_and_cancels_are_spans_and_runs_are_timed(observed: Observed) -> None:
    inner = Executor()
    telemetry = observed.telemetry
    executor = ObservedExecutor(inner, telemetry.tracer, telemetry.instruments)
    context = RequestContext(user("hi"), "t-1", "c-1", CallContext())

    async def main() -> None:
        await executor.execute(context, _NoSink())
        await executor.cancel(context)

    run(main())
    assert inner.runs == ["t-1", "cancel t-1"]
    run_span, cancel_span = observed.finished()
    assert (run_span.name, cancel_span.name) == ("agent run", "agent cancel")
    assert dict(run_span.attributes or {}) == {"a2a.task.id": "t-1", "a2a.context.id": "c-1"}
    assert dict(cancel_span.attributes or {}) == {"a2a.task.id": "t-1"}
    [(_, point)] = list(observed.points("a2a.agent.run.duration"))
    assert point.count == 1
    assert executor.resumable is True  # the executor's own attributes show through


class _NoSink:
    async def emit(self, event: object) -> None:
        raise AssertionError("nothing is emitted")


class Outbox:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def delivered(self, delivery: object) -> str:
        self.calls.append("delivered")
        return "ok"

    async def retry(self, delivery: object, due: int, error: str) -> None:
        self.calls.append("retry")

    async def bury(self, delivery: object, error: str) -> None:
        self.calls.append("bury")

    async def disable(self, delivery: object, error: str) -> None:
        self.calls.append("disable")

    async def claim(self, now: int, lease: int, limit: int) -> list[object]:
        self.calls.append("claim")
        return []


def test_settled_deliveries_are_counted_by_outcome(observed: Observed) -> None:
    inner = Outbox()
    outbox = ObservedOutbox(inner, observed.telemetry.instruments)

    async def main() -> None:
        assert await outbox.delivered(None) == "ok"
        await outbox.delivered(None)
        await outbox.retry(None, 0, "503")
        await outbox.bury(None, "gave up")
        await outbox.disable(None, "410")
        assert await outbox.claim(0, 0, 1) == []

    run(main())
    assert inner.calls == ["delivered", "delivered", "retry", "bury", "disable", "claim"]
    counted = {
        labels["parley.push.outcome"]: point.value
        for labels, point in observed.points("parley.push.attempts")
        if isinstance(point, NumberDataPoint)
    }
    assert counted == {"delivered": 2, "retry": 1, "dead_letter": 1, "disabled": 1}


def echo() -> Agent:
    agent = Agent("Echo")

    @agent.skill()
    async def answer(task: TaskContext) -> str:
        return task.text

    return agent


def test_observe_service_puts_the_wrappers_in_place_once(observed: Observed) -> None:
    service, _ = serve(echo())
    telemetry = observed.telemetry
    observe_service(service, telemetry.tracer, telemetry.instruments)
    store, executor = service.store, service.runner.executor
    assert isinstance(store, ObservedStore)
    assert service.runner.store is store
    assert isinstance(executor, ObservedExecutor)
    observe_service(service, telemetry.tracer, telemetry.instruments)
    assert service.store is store
    assert service.runner.executor is executor  # not wrapped twice

    done = as_task(run(service.send_message(ALICE, send("hi"))))
    assert done.status.state is TaskState.COMPLETED
    names = [s.name for s in observed.finished()]
    assert "agent run" in names
    assert "store create" in names


def test_observe_service_leaves_other_handlers_alone(observed: Observed) -> None:
    class Plain:
        runner = None
        store = object()

    plain = Plain()
    observe_service(plain, observed.telemetry.tracer, observed.telemetry.instruments)
    assert plain.runner is None
