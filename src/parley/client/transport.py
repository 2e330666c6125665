"""The `Transport` protocol the client speaks through: one method per operation, named as
the server's `RequestHandler` names them; JSON-RPC, HTTP+JSON, gRPC and the in-memory
transport implement it (on `BaseTransport`). Retries live above it (`Session`), wrappers
around it (`transport_wrappers`: observability).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

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
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation

DEFAULT_TIMEOUT = 300.0
"""Seconds a unary call may take: generous, since a blocking SendMessage waits for the
agent to finish or ask for input."""


class Default(enum.Enum):
    """The type of `DEFAULT`: "use the client's setting" for a per-call option."""

    DEFAULT = "default"


DEFAULT = Default.DEFAULT
Timeout = float | None | Literal[Default.DEFAULT]
"""A per-call timeout: seconds, None (no deadline), or DEFAULT (the client's)."""


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-call settings a transport applies.

    `extensions`: URIs sent in the version's extensions header. `timeout`: the deadline
    of a unary call in seconds (None: none); streams have no deadline. `idle_timeout`:
    the longest a stream may receive nothing before it fails with StreamIdleError (None:
    no limit). `last_event_id`: sent as `Last-Event-ID` (resuming a stream). `headers`:
    extra request headers (HTTP) or metadata.
    """

    extensions: tuple[str, ...] = ()
    timeout: float | None = DEFAULT_TIMEOUT
    idle_timeout: float | None = None
    last_event_id: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


class EventStream(Protocol):
    """An async iterator of stream events that knows each event's id.

    The request is sent on the first `__anext__`; errors the server answers before the
    first event are raised there. `last_event_id` is the SSE `id` of the event just
    returned ("" when the server sends none). `aclose` ends the stream early.
    """

    @property
    def last_event_id(self) -> str: ...

    def __aiter__(self) -> EventStream: ...

    async def __anext__(self) -> StreamEvent: ...

    async def aclose(self) -> None: ...


class Transport(Protocol):
    """One connection to one agent interface, in one protocol version.

    Every method raises the server's errors as `parley.protocol.errors` classes and
    transport failures as `parley.client.errors` classes.
    """

    @property
    def version(self) -> Version: ...

    async def send_message(
        self, request: SendMessageRequest, options: CallOptions
    ) -> SendMessageResult: ...

    def send_streaming_message(
        self, request: SendMessageRequest, options: CallOptions
    ) -> EventStream: ...

    async def get_task(self, request: GetTaskRequest, options: CallOptions) -> Task: ...

    async def list_tasks(
        self, request: ListTasksRequest, options: CallOptions
    ) -> ListTasksResponse: ...

    async def cancel_task(self, request: CancelTaskRequest, options: CallOptions) -> Task: ...

    def subscribe_to_task(
        self, request: SubscribeToTaskRequest, options: CallOptions
    ) -> EventStream: ...

    async def create_task_push_notification_config(
        self, request: TaskPushNotificationConfig, options: CallOptions
    ) -> TaskPushNotificationConfig: ...

    async def get_task_push_notification_config(
        self, request: GetTaskPushNotificationConfigRequest, options: CallOptions
    ) -> TaskPushNotificationConfig: ...

    async def list_task_push_notification_configs(
        self, request: ListTaskPushNotificationConfigsRequest, options: CallOptions
    ) -> ListTaskPushNotificationConfigsResponse: ...

    async def delete_task_push_notification_config(
        self, request: DeleteTaskPushNotificationConfigRequest, options: CallOptions
    ) -> None: ...

    async def get_extended_agent_card(
        self, request: GetExtendedAgentCardRequest, options: CallOptions
    ) -> AgentCard: ...

    async def aclose(self) -> None: ...


TransportWrapper = Callable[[Transport], Transport]

transport_wrappers: ContextVar[tuple[TransportWrapper, ...]] = ContextVar(
    "parley_transport_wrappers", default=()
)
"""Applied in order to the transport of every Client made in the context
(`parley.observability.observe_clients` sets one: a span per operation). An immutable
tuple set at the edge (`parley serve --otel`, before its event loop starts, so every task
the server runs inherits it) and undone by resetting its token; empty, the default: the
transport as given, nothing paid per call."""


def wrapped(transport: Transport, wrappers: tuple[TransportWrapper, ...]) -> Transport:
    """`transport` through each of `wrappers`, in order."""
    for wrap in wrappers:
        transport = wrap(transport)
    return transport


class BaseTransport:
    """Every `Transport` method on two primitives, `unary` and `stream`, keyed by the
    operations table: what the JSON-RPC, HTTP+JSON, gRPC and in-memory transports share."""

    async def unary(self, operation: Operation, request: Model, options: CallOptions) -> Any:
        raise NotImplementedError

    def stream(self, operation: Operation, request: Model, options: CallOptions) -> EventStream:
        raise NotImplementedError

    async def send_message(
        self, request: SendMessageRequest, options: CallOptions
    ) -> SendMessageResult:
        result: SendMessageResult = await self.unary(Operation.SEND_MESSAGE, request, options)
        return result

    def send_streaming_message(
        self, request: SendMessageRequest, options: CallOptions
    ) -> EventStream:
        return self.stream(Operation.SEND_STREAMING_MESSAGE, request, options)

    async def get_task(self, request: GetTaskRequest, options: CallOptions) -> Task:
        result: Task = await self.unary(Operation.GET_TASK, request, options)
        return result

    async def list_tasks(
        self, request: ListTasksRequest, options: CallOptions
    ) -> ListTasksResponse:
        result: ListTasksResponse = await self.unary(Operation.LIST_TASKS, request, options)
        return result

    async def cancel_task(self, request: CancelTaskRequest, options: CallOptions) -> Task:
        result: Task = await self.unary(Operation.CANCEL_TASK, request, options)
        return result

    def subscribe_to_task(
        self, request: SubscribeToTaskRequest, options: CallOptions
    ) -> EventStream:
        return self.stream(Operation.SUBSCRIBE_TO_TASK, request, options)

    async def create_task_push_notification_config(
        self, request: TaskPushNotificationConfig, options: CallOptions
    ) -> TaskPushNotificationConfig:
        operation = Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG
        result: TaskPushNotificationConfig = await self.unary(operation, request, options)
        return result

    async def get_task_push_notification_config(
        self, request: GetTaskPushNotificationConfigRequest, options: CallOptions
    ) -> TaskPushNotificationConfig:
        operation = Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG
        result: TaskPushNotificationConfig = await self.unary(operation, request, options)
        return result

    async def list_task_push_notification_configs(
        self, request: ListTaskPushNotificationConfigsRequest, options: CallOptions
    ) -> ListTaskPushNotificationConfigsResponse:
        operation = Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS
        result: ListTaskPushNotificationConfigsResponse = await self.unary(
            operation, request, options
        )
        return result

    async def delete_task_push_notification_config(
        self, request: DeleteTaskPushNotificationConfigRequest, options: CallOptions
    ) -> None:
        await self.unary(Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG, request, options)

    async def get_extended_agent_card(
        self, request: GetExtendedAgentCardRequest, options: CallOptions
    ) -> AgentCard:
        result: AgentCard = await self.unary(Operation.GET_EXTENDED_AGENT_CARD, request, options)
        return result
