"""The request handler interface every binding calls: one async method per operation,
on the canonical model, named as the operation in snake_case.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

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
)
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
