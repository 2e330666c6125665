"""The request handler interface every binding calls: one async method per operation,
on the canonical model, named as the operation in snake_case; and the dispatch table that
takes each operation of `parley.protocol.operations` to its method, typed.

The table lives here rather than in the operations table because `parley.protocol` may not
know the server's types: mypy checks each entry's request type against the handler
method's, and importing this module checks it against the operations table's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

import msgspec

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
    Model,
    SendMessageRequest,
    SendMessageResult,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from parley.protocol.operations import OPERATIONS, Operation, OperationSpec
from parley.server.context import CallContext


class RequestHandler(Protocol):
    """What a binding needs. Errors are raised as `parley.protocol.errors` classes.

    Streaming methods return an async iterator; errors detected before the first
    event are raised by the first `__anext__`, so a binding can still answer with a
    plain error response. Closing the iterator (`aclose`) unsubscribes.
    """

    @property
    def card(self) -> AgentCard: ...

    async def send_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> SendMessageResult: ...

    def send_streaming_message(
        self, ctx: CallContext, request: SendMessageRequest
    ) -> AsyncIterator[StreamEvent]: ...

    async def get_task(self, ctx: CallContext, request: GetTaskRequest) -> Task: ...

    async def list_tasks(
        self, ctx: CallContext, request: ListTasksRequest
    ) -> ListTasksResponse: ...

    async def cancel_task(self, ctx: CallContext, request: CancelTaskRequest) -> Task: ...

    def subscribe_to_task(
        self, ctx: CallContext, request: SubscribeToTaskRequest
    ) -> AsyncIterator[StreamEvent]: ...

    async def create_task_push_notification_config(
        self, ctx: CallContext, request: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig: ...

    async def get_task_push_notification_config(
        self, ctx: CallContext, request: GetTaskPushNotificationConfigRequest
    ) -> TaskPushNotificationConfig: ...

    async def list_task_push_notification_configs(
        self, ctx: CallContext, request: ListTaskPushNotificationConfigsRequest
    ) -> ListTaskPushNotificationConfigsResponse: ...

    async def delete_task_push_notification_config(
        self, ctx: CallContext, request: DeleteTaskPushNotificationConfigRequest
    ) -> None: ...

    async def get_extended_agent_card(
        self, ctx: CallContext, request: GetExtendedAgentCardRequest
    ) -> AgentCard: ...


Req = TypeVar("Req", bound=Model)
Out_co = TypeVar("Out_co", covariant=True)


class HandlerCall(msgspec.Struct, Generic[Req, Out_co], frozen=True):
    """One operation's handler method: `call(handler, ctx, request)` is
    `handler.<operation>(ctx, request)`, an awaitable (unary) or an event iterator."""

    spec: OperationSpec
    call: Callable[[RequestHandler, CallContext, Req], Out_co]


def _call(
    operation: Operation,
    request: type[Req],
    call: Callable[[RequestHandler, CallContext, Req], Out_co],
) -> HandlerCall[Req, Out_co]:
    spec = OPERATIONS[operation]
    if spec.request is not request:  # the table and the handler disagree: fail at import
        raise TypeError(f"{operation.value} takes {spec.request.__name__}, not {request}")
    return HandlerCall(spec, call)


UnaryCall = HandlerCall[Any, Awaitable[Any]]
StreamCall = HandlerCall[Any, AsyncIterator[StreamEvent]]

UNARY: Mapping[Operation, UnaryCall] = {
    entry.spec.operation: entry
    for entry in (
        _call(
            Operation.SEND_MESSAGE,
            SendMessageRequest,
            lambda h, ctx, r: h.send_message(ctx, r),
        ),
        _call(Operation.GET_TASK, GetTaskRequest, lambda h, ctx, r: h.get_task(ctx, r)),
        _call(Operation.LIST_TASKS, ListTasksRequest, lambda h, ctx, r: h.list_tasks(ctx, r)),
        _call(Operation.CANCEL_TASK, CancelTaskRequest, lambda h, ctx, r: h.cancel_task(ctx, r)),
        _call(
            Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
            TaskPushNotificationConfig,
            lambda h, ctx, r: h.create_task_push_notification_config(ctx, r),
        ),
        _call(
            Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
            GetTaskPushNotificationConfigRequest,
            lambda h, ctx, r: h.get_task_push_notification_config(ctx, r),
        ),
        _call(
            Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            ListTaskPushNotificationConfigsRequest,
            lambda h, ctx, r: h.list_task_push_notification_configs(ctx, r),
        ),
        _call(
            Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            DeleteTaskPushNotificationConfigRequest,
            lambda h, ctx, r: h.delete_task_push_notification_config(ctx, r),
        ),
        _call(
            Operation.GET_EXTENDED_AGENT_CARD,
            GetExtendedAgentCardRequest,
            lambda h, ctx, r: h.get_extended_agent_card(ctx, r),
        ),
    )
}
"""The unary operations' handler methods."""

STREAMING: Mapping[Operation, StreamCall] = {
    entry.spec.operation: entry
    for entry in (
        _call(
            Operation.SEND_STREAMING_MESSAGE,
            SendMessageRequest,
            lambda h, ctx, r: h.send_streaming_message(ctx, r),
        ),
        _call(
            Operation.SUBSCRIBE_TO_TASK,
            SubscribeToTaskRequest,
            lambda h, ctx, r: h.subscribe_to_task(ctx, r),
        ),
    )
}
"""The streaming operations' handler methods."""
