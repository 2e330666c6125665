"""`ObservedHandler` on every operation: its labels, ids, statuses and open streams, with
a tiny fake inner handler (the wrapper is what is under test)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from parley.model import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.observability import Telemetry, build
from parley.observability.handler import ObservedHandler, ids_of
from parley.observability.instruments import CONTEXT_ID, METHOD, STATUS, TASK_ID
from parley.protocol.errors import TaskNotFoundError
from parley.server.agent import Agent
from parley.server.context import CallContext

pytestmark = pytest.mark.anyio

CTX = CallContext()
CARD = Agent("Observed").card("http://127.0.0.1")


def _task(state: TaskState = TaskState.COMPLETED) -> Task:
    return Task(id="t1", context_id="c1", status=TaskStatus(state=state))


class Events:
    """An event stream with no `aclose`, that fails after its events when told to."""

    def __init__(self, events: list[Any], error: BaseException | None = None) -> None:
        self.events = list(events)
        self.error = error

    def __aiter__(self) -> Events:
        return self

    async def __anext__(self) -> Any:
        if self.events:
            return self.events.pop(0)
        if self.error is not None:
            raise self.error
        raise StopAsyncIteration


class Inner:
    """A handler answering each operation with a canned value."""

    card = CARD
    store = "the inner store"

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.stream: Events = Events([])

    async def list_tasks(self, ctx: CallContext, request: ListTasksRequest) -> ListTasksResponse:
        self.calls.append(("list_tasks", request))
        return ListTasksResponse(tasks=(_task(),), next_page_token="", page_size=1, total_size=1)

    async def cancel_task(self, ctx: CallContext, request: CancelTaskRequest) -> Task:
        self.calls.append(("cancel_task", request))
        if request.id != "t1":
            raise TaskNotFoundError(f"no task {request.id}")
        return _task(TaskState.CANCELED)

    def subscribe_to_task(self, ctx: CallContext, request: SubscribeToTaskRequest) -> Events:
        self.calls.append(("subscribe_to_task", request))
        return self.stream

    def send_streaming_message(self, ctx: CallContext, request: object) -> Events:
        raise RuntimeError("refused before streaming")

    async def create_task_push_notification_config(
        self, ctx: CallContext, request: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        self.calls.append(("create", request))
        return TaskPushNotificationConfig(url=request.url, task_id=request.task_id, id="p1")

    async def get_task_push_notification_config(
        self, ctx: CallContext, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        self.calls.append(("get", request))
        return TaskPushNotificationConfig(url="http://127.0.0.1/h", task_id=request.task_id)

    async def list_task_push_notification_configs(
        self, ctx: CallContext, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        self.calls.append(("list", request))
        return ListTaskPushNotificationConfigsResponse(configs=())

    async def delete_task_push_notification_config(
        self, ctx: CallContext, request: DeleteTaskPushNotificationConfigRequest
    ) -> None:
        self.calls.append(("delete", request))

    async def get_extended_agent_card(
        self, ctx: CallContext, request: GetExtendedAgentCardRequest
    ) -> AgentCard:
        self.calls.append(("card", request))
        return CARD


class Observed:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        self.telemetry: Telemetry = build([SimpleSpanProcessor(self.spans)], [self.metrics])
        self.inner = Inner()
        self.handler = ObservedHandler(self.inner, self.telemetry.instruments)  # type: ignore[arg-type]

    def points(self, name: str) -> list[tuple[dict[str, Any], float]]:
        data = self.metrics.get_metrics_data()
        found: list[tuple[dict[str, Any], float]] = []
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            value: float = getattr(point, "value", None) or 0
                            found.append((dict(point.attributes or {}), float(value)))
        return found

    def requests(self) -> dict[tuple[str, str], float]:
        return {
            (str(labels[METHOD]), str(labels[STATUS])): value
            for labels, value in self.points("a2a.server.requests")
        }


@pytest.fixture
def observed() -> Any:
    made = Observed()
    yield made
    made.telemetry.shutdown()


def test_ids_of_a_subscription_names_its_task() -> None:
    assert ids_of(SubscribeToTaskRequest(id="t9")) == {TASK_ID: "t9"}
    assert ids_of(ListTasksRequest(context_id="c9")) == {CONTEXT_ID: "c9"}
    assert ids_of(GetExtendedAgentCardRequest()) == {}


async def test_every_unary_operation_is_counted_under_its_method(observed: Observed) -> None:
    handler = observed.handler
    page = await handler.list_tasks(CTX, ListTasksRequest(context_id="c1"))
    assert page.tasks[0].id == "t1"
    config = TaskPushNotificationConfig(url="http://127.0.0.1/h", task_id="t1")
    assert (await handler.create_task_push_notification_config(CTX, config)).id == "p1"
    got = GetTaskPushNotificationConfigRequest(task_id="t1", id="p1")
    assert (await handler.get_task_push_notification_config(CTX, got)).task_id == "t1"
    listed = ListTaskPushNotificationConfigsRequest(task_id="t1")
    assert (await handler.list_task_push_notification_configs(CTX, listed)).configs == ()
    deleted = DeleteTaskPushNotificationConfigRequest(task_id="t1", id="p1")
    await handler.delete_task_push_notification_config(CTX, deleted)
    assert await handler.get_extended_agent_card(CTX, GetExtendedAgentCardRequest()) is CARD
    assert (await handler.cancel_task(CTX, CancelTaskRequest(id="t1"))).id == "t1"
    with pytest.raises(TaskNotFoundError):
        await handler.cancel_task(CTX, CancelTaskRequest(id="t404"))

    assert [name for name, _ in observed.inner.calls] == [
        "list_tasks",
        "create",
        "get",
        "list",
        "delete",
        "card",
        "cancel_task",
        "cancel_task",
    ]
    assert observed.requests() == {
        ("ListTasks", "ok"): 1,
        ("CreateTaskPushNotificationConfig", "ok"): 1,
        ("GetTaskPushNotificationConfig", "ok"): 1,
        ("ListTaskPushNotificationConfigs", "ok"): 1,
        ("DeleteTaskPushNotificationConfig", "ok"): 1,
        ("GetExtendedAgentCard", "ok"): 1,
        ("CancelTask", "ok"): 1,
        ("CancelTask", "TaskNotFoundError"): 1,
    }
    states = observed.points("a2a.server.task_states")
    # a page of tasks is not counted; the canceled task answered is
    assert [(labels["a2a.task.state"], value) for labels, value in states] == [("CANCELED", 1)]
    # the other attributes are the inner handler's
    assert handler.card is CARD
    assert handler.store == "the inner store"


async def test_calls_outside_a_span_are_counted_but_describe_nothing(observed: Observed) -> None:
    await observed.handler.list_tasks(CTX, ListTasksRequest())
    assert observed.spans.get_finished_spans() == ()
    assert observed.requests() == {("ListTasks", "ok"): 1}


async def test_a_call_inside_a_server_span_names_and_describes_it(observed: Observed) -> None:
    tracer = observed.telemetry.tracer
    with (
        tracer.start_as_current_span("POST", kind=SpanKind.SERVER),
        pytest.raises(TaskNotFoundError),
    ):
        await observed.handler.cancel_task(CTX, CancelTaskRequest(id="t404"))
    (span,) = observed.spans.get_finished_spans()
    assert span.name == "A2AService/CancelTask"
    assert span.attributes is not None
    assert span.attributes[TASK_ID] == "t404"
    assert span.attributes[METHOD] == "CancelTask"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "TaskNotFoundError"
    assert [event.name for event in span.events] == ["exception"]


async def test_a_subscription_counts_its_states_and_closes_without_aclose(
    observed: Observed,
) -> None:
    working = TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=TaskStatus(state=TaskState.WORKING)
    )
    observed.inner.stream = Events([_task(TaskState.WORKING), working, _task()])
    stream = observed.handler.subscribe_to_task(CTX, SubscribeToTaskRequest(id="t1"))
    assert getattr(stream, "sequence", "missing") is None
    first = await stream.__anext__()
    assert isinstance(first, Task)
    assert observed.points("a2a.server.open_streams")[0][1] == 1
    await stream.aclose()  # type: ignore[attr-defined]
    await stream.aclose()  # type: ignore[attr-defined]  # ends once
    assert observed.points("a2a.server.open_streams")[0][1] == 0
    assert observed.requests() == {("SubscribeToTask", "ok"): 1}
    # only the terminal or interrupted states are counted: WORKING is neither
    assert observed.points("a2a.server.task_states") == []


async def test_a_stream_that_fails_is_counted_with_its_error(observed: Observed) -> None:
    observed.inner.stream = Events([_task()], RuntimeError("the bus went away"))
    stream = observed.handler.subscribe_to_task(CTX, SubscribeToTaskRequest(id="t1"))
    assert isinstance(await stream.__anext__(), Task)
    with pytest.raises(RuntimeError, match="the bus went away"):
        await stream.__anext__()
    assert observed.requests() == {("SubscribeToTask", "InternalError"): 1}
    assert observed.points("a2a.server.open_streams")[0][1] == 0
    states = observed.points("a2a.server.task_states")
    assert [(labels["a2a.task.state"], value) for labels, value in states] == [("COMPLETED", 1)]


async def test_a_stream_refused_before_it_starts_is_counted(observed: Observed) -> None:
    with pytest.raises(RuntimeError, match="refused"):
        observed.handler.send_streaming_message(CTX, None)  # type: ignore[arg-type]
    assert observed.requests() == {("SendStreamingMessage", "InternalError"): 1}
    assert observed.points("a2a.server.open_streams") == []


async def test_a_stream_read_to_its_end_is_counted_once(observed: Observed) -> None:
    observed.inner.stream = Events([_task(TaskState.INPUT_REQUIRED)])
    stream = observed.handler.subscribe_to_task(CTX, SubscribeToTaskRequest(id="t1"))
    events = [event async for event in stream]
    assert events == [_task(TaskState.INPUT_REQUIRED)]
    assert observed.requests() == {("SubscribeToTask", "ok"): 1}
    assert observed.points("a2a.server.open_streams")[0][1] == 0
    states = observed.points("a2a.server.task_states")
    assert [(labels["a2a.task.state"], value) for labels, value in states] == [
        ("INPUT_REQUIRED", 1)
    ]
