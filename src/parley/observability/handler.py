"""`ObservedHandler`: a RequestHandler around another that names the current server span
after the operation, adds the A2A attributes (method, protocol version, binding, task and
context ids) and records the request metrics. It opens no span of its own: the edge
wrappers (`parley.observability.asgi`, `.grpc`) opened the server span it describes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from opentelemetry import trace

from parley.model import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResult,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from parley.observability.instruments import (
    BINDING,
    CONTEXT_ID,
    METHOD,
    STATUS,
    TASK_ID,
    TASK_STATE,
    VERSION,
    Instruments,
    arrived_on,
)
from parley.protocol import lifecycle
from parley.protocol.errors import A2AError
from parley.protocol.operations import Operation
from parley.server.context import CallContext
from parley.server.handler import RequestHandler

SERVICE = "A2AService"

Req = TypeVar("Req")
Out = TypeVar("Out")


def ids_of(value: object) -> dict[str, str]:
    """The task and context ids a request, result or event names."""
    message = getattr(value, "message", None)
    if message is not None:
        value = message
    task_id = getattr(value, "task_id", None)
    if task_id is None and isinstance(value, Task | GetTaskRequest | CancelTaskRequest):
        task_id = value.id
    if task_id is None and isinstance(value, SubscribeToTaskRequest):
        task_id = value.id
    found = {TASK_ID: task_id, CONTEXT_ID: getattr(value, "context_id", None)}
    return {key: text for key, text in found.items() if isinstance(text, str) and text}


def _status(error: BaseException | None) -> str:
    if error is None:
        return "ok"
    return type(error).__name__ if isinstance(error, A2AError) else "InternalError"


class _Call:
    """One call's span attributes and metric labels."""

    __slots__ = ("described", "instruments", "labels", "span", "started")

    def __init__(self, instruments: Instruments, operation: Operation, ctx: CallContext) -> None:
        self.instruments = instruments
        self.labels = {
            METHOD: operation.value,
            VERSION: ctx.version.value,
            BINDING: arrived_on.get() or "unknown",
        }
        self.described = False
        self.span = trace.get_current_span()
        if self.span.is_recording():
            self.span.update_name(f"{SERVICE}/{operation.value}")
            self.span.set_attributes(self.labels)
        self.started = time.perf_counter()

    def describe(self, value: object) -> None:
        """The ids `value` names on the span (the first value that names them: a stream's
        events all name the same); its task state counted."""
        if not self.described:
            ids = ids_of(value)
            if TASK_ID in ids:
                self.described = True
            if ids and self.span.is_recording():
                self.span.set_attributes(ids)
        state = None
        if isinstance(value, Task | TaskStatusUpdateEvent):
            state = value.status.state
        if state is not None and (lifecycle.is_terminal(state) or lifecycle.is_interrupted(state)):
            self.instruments.task_states.add(1, {TASK_STATE: state.name})

    def end(self, error: BaseException | None) -> None:
        labels = {**self.labels, STATUS: _status(error)}
        self.instruments.requests.add(1, labels)
        self.instruments.duration.record(time.perf_counter() - self.started, labels)
        if error is not None and self.span.is_recording():
            self.span.record_exception(error)
            self.span.set_status(trace.StatusCode.ERROR, _status(error))


class ObservedStream:
    """A handler's event stream, counted open until it ends or is closed."""

    def __init__(self, events: AsyncIterator[StreamEvent], call: _Call) -> None:
        self._events = events
        self._call = call
        self._open = True
        call.instruments.open_streams.add(1, call.labels)

    @property
    def sequence(self) -> int | None:
        sequence: int | None = getattr(self._events, "sequence", None)
        return sequence

    def __aiter__(self) -> ObservedStream:
        return self

    async def __anext__(self) -> StreamEvent:
        try:
            event = await self._events.__anext__()
        except StopAsyncIteration:
            self._end(None)
            raise
        except BaseException as exc:
            self._end(exc)
            raise
        self._call.describe(event)
        return event

    async def aclose(self) -> None:
        try:
            close = getattr(self._events, "aclose", None)
            if close is not None:
                await close()
        finally:
            self._end(None)

    def _end(self, error: BaseException | None) -> None:
        if self._open:
            self._open = False
            self._call.instruments.open_streams.add(-1, self._call.labels)
            self._call.end(error)


class ObservedHandler:
    """`handler`, its calls described on the current span and counted in `instruments`.
    Every other attribute (the card, the stores, the lifespan hooks) is the handler's."""

    def __init__(self, handler: RequestHandler, instruments: Instruments) -> None:
        self.handler = handler
        self.instruments = instruments

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handler, name)

    @property
    def card(self) -> AgentCard:
        return self.handler.card

    async def _unary(
        self,
        operation: Operation,
        method: Callable[[CallContext, Req], Awaitable[Out]],
        ctx: CallContext,
        request: Req,
    ) -> Out:
        call = _Call(self.instruments, operation, ctx)
        call.describe(request)
        try:
            result = await method(ctx, request)
        except BaseException as exc:
            call.end(exc)
            raise
        call.describe(result)
        call.end(None)
        return result

    def _stream(
        self,
        operation: Operation,
        method: Callable[[CallContext, Req], AsyncIterator[StreamEvent]],
        ctx: CallContext,
        request: Req,
    ) -> ObservedStream:
        call = _Call(self.instruments, operation, ctx)
        call.describe(request)
        try:
            events = method(ctx, request)
        except BaseException as exc:
            call.end(exc)
            raise
        return ObservedStream(events, call)

    async def send_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> SendMessageResult:
        return await self._unary(Operation.SEND_MESSAGE, self.handler.send_message, ctx, request)

    def send_streaming_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> AsyncIterator[StreamEvent]:
        return self._stream(
            Operation.SEND_STREAMING_MESSAGE, self.handler.send_streaming_message, ctx, request
        )

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task:
        return await self._unary(Operation.GET_TASK, self.handler.get_task, ctx, request)

    async def list_tasks(self, ctx: CallContext, request: ListTasksRequest) -> ListTasksResponse:
        return await self._unary(Operation.LIST_TASKS, self.handler.list_tasks, ctx, request)

    async def cancel_task(self, ctx: CallContext, request: CancelTaskRequest) -> Task:
        return await self._unary(Operation.CANCEL_TASK, self.handler.cancel_task, ctx, request)

    def subscribe_to_task(
        self, ctx: CallContext, request: SubscribeToTaskRequest
    ) -> AsyncIterator[StreamEvent]:
        return self._stream(
            Operation.SUBSCRIBE_TO_TASK, self.handler.subscribe_to_task, ctx, request
        )

    async def create_task_push_notification_config(
        self, ctx: CallContext, request: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        return await self._unary(
            Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
            self.handler.create_task_push_notification_config,
            ctx,
            request,
        )

    async def get_task_push_notification_config(
        self, ctx: CallContext, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig:
        return await self._unary(
            Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
            self.handler.get_task_push_notification_config,
            ctx,
            request,
        )

    async def list_task_push_notification_configs(
        self, ctx: CallContext, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse:
        return await self._unary(
            Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            self.handler.list_task_push_notification_configs,
            ctx,
            request,
        )

    async def delete_task_push_notification_config(
        self, ctx: CallContext, request: DeleteTaskPushNotificationConfigRequest
    ) -> None:
        return await self._unary(
            Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            self.handler.delete_task_push_notification_config,
            ctx,
            request,
        )

    async def get_extended_agent_card(
        self, ctx: CallContext, request: GetExtendedAgentCardRequest
    ) -> AgentCard:
        return await self._unary(
            Operation.GET_EXTENDED_AGENT_CARD, self.handler.get_extended_agent_card, ctx, request
        )
