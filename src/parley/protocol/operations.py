"""The operations table: every A2A operation as data.

For each operation: request and response model types, streaming or not, the
capability it needs, and per protocol version its JSON-RPC method, REST routes
(1.0 routes also in their `/{tenant}` form) and gRPC method. Dispatchers, client
transports and docs are driven from this table. No I/O here.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

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
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from parley.protocol.errors import (
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from parley.protocol.negotiation import Version, released_form


class Operation(enum.Enum):
    """Every operation, named as the 1.0 gRPC method."""

    SEND_MESSAGE = "SendMessage"
    SEND_STREAMING_MESSAGE = "SendStreamingMessage"
    GET_TASK = "GetTask"
    LIST_TASKS = "ListTasks"
    CANCEL_TASK = "CancelTask"
    SUBSCRIBE_TO_TASK = "SubscribeToTask"
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG = "CreateTaskPushNotificationConfig"
    GET_TASK_PUSH_NOTIFICATION_CONFIG = "GetTaskPushNotificationConfig"
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS = "ListTaskPushNotificationConfigs"
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG = "DeleteTaskPushNotificationConfig"
    GET_EXTENDED_AGENT_CARD = "GetExtendedAgentCard"

    __hash__ = object.__hash__
    """Hashed in C by identity, not by `Enum.__hash__` (a Python call per lookup of the
    operation tables, several per request); members are singletons."""


class Capability(enum.Enum):
    """A card capability an operation depends on."""

    STREAMING = "streaming"
    PUSH_NOTIFICATIONS = "push_notifications"
    EXTENDED_AGENT_CARD = "extended_agent_card"


class Route(msgspec.Struct, frozen=True):
    """One REST route: HTTP verb and path template (`{name}` = one path segment)."""

    verb: str
    path: str


class Binding(msgspec.Struct, frozen=True):
    """How one operation is spelled in one protocol version."""

    jsonrpc_method: str
    routes: tuple[Route, ...]
    grpc_method: str


class OperationSpec(msgspec.Struct, frozen=True):
    """Everything about one operation. `response` None means an empty response.

    `idempotent`: sending the same request again gets the same answer and changes nothing
    more, so a client may retry it after a lost answer (`parley.client.retry`). The reads,
    and Delete of a push config (R-PUSH-7); not SendMessage, not the streams, not Create,
    and not CancelTask: the spec calls it idempotent in effect (R-TASK-11), but a repeat
    of a cancel that went through is answered TaskNotCancelableError (docs/decisions.md).
    """

    operation: Operation
    request: type[Model]
    response: type[Model] | None
    streaming: bool
    capability: Capability | None
    bindings: Mapping[Version, Binding]
    idempotent: bool = False


GRPC_SERVICES: Mapping[Version, str] = {
    Version.V1_1: "lf.a2a.v1.A2AService",  # the draft keeps 1.0's package and service
    Version.V1_0: "lf.a2a.v1.A2AService",
    Version.V0_3: "a2a.v1.A2AService",
}


def _v1(method: str, *routes: tuple[str, str]) -> Binding:
    """A 1.0 binding: every route also exists under a `/{tenant}` prefix."""
    plain = tuple(Route(verb, path) for verb, path in routes)
    tenant = tuple(Route(r.verb, "/{tenant}" + r.path) for r in plain)
    return Binding(jsonrpc_method=method, routes=plain + tenant, grpc_method=method)


def _v03(jsonrpc: str, grpc: str, *routes: tuple[str, str]) -> Binding:
    return Binding(
        jsonrpc_method=jsonrpc,
        routes=tuple(Route(verb, path) for verb, path in routes),
        grpc_method=grpc,
    )


_PUSH = "/tasks/{task_id}/pushNotificationConfigs"


def _spec(
    operation: Operation,
    request: type[Model],
    response: type[Model] | None,
    v1: Binding,
    v03: Binding | None,
    *,
    streaming: bool = False,
    capability: Capability | None = None,
    idempotent: bool = False,
) -> OperationSpec:
    bindings = {Version.V1_1: v1, Version.V1_0: v1} | ({Version.V0_3: v03} if v03 else {})
    return OperationSpec(operation, request, response, streaming, capability, bindings, idempotent)


OPERATIONS: Mapping[Operation, OperationSpec] = {
    spec.operation: spec
    for spec in (
        _spec(
            Operation.SEND_MESSAGE,
            SendMessageRequest,
            None,  # Task or Message: see SendMessageResult
            _v1("SendMessage", ("POST", "/message:send")),
            _v03("message/send", "SendMessage", ("POST", "/v1/message:send")),
        ),
        _spec(
            Operation.SEND_STREAMING_MESSAGE,
            SendMessageRequest,
            None,  # a stream of StreamEvent
            _v1("SendStreamingMessage", ("POST", "/message:stream")),
            _v03("message/stream", "SendStreamingMessage", ("POST", "/v1/message:stream")),
            streaming=True,
            capability=Capability.STREAMING,
        ),
        _spec(
            Operation.GET_TASK,
            GetTaskRequest,
            Task,
            _v1("GetTask", ("GET", "/tasks/{id}")),
            _v03("tasks/get", "GetTask", ("GET", "/v1/tasks/{id}")),
            idempotent=True,
        ),
        _spec(
            Operation.LIST_TASKS,
            ListTasksRequest,
            ListTasksResponse,
            _v1("ListTasks", ("GET", "/tasks")),
            None,  # 0.3 has no ListTasks (REFERENCE D13)
            idempotent=True,
        ),
        _spec(
            Operation.CANCEL_TASK,
            CancelTaskRequest,
            Task,
            _v1("CancelTask", ("POST", "/tasks/{id}:cancel")),
            _v03("tasks/cancel", "CancelTask", ("POST", "/v1/tasks/{id}:cancel")),
        ),
        _spec(
            Operation.SUBSCRIBE_TO_TASK,
            SubscribeToTaskRequest,
            None,  # a stream of StreamEvent
            # The proto says GET, the prose POST: serve both (REFERENCE D1, D2).
            _v1(
                "SubscribeToTask",
                ("GET", "/tasks/{id}:subscribe"),
                ("POST", "/tasks/{id}:subscribe"),
            ),
            _v03(
                "tasks/resubscribe",
                "TaskSubscription",
                ("GET", "/v1/tasks/{id}:subscribe"),
                ("POST", "/v1/tasks/{id}:subscribe"),
            ),
            streaming=True,
            capability=Capability.STREAMING,
        ),
        _spec(
            Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
            TaskPushNotificationConfig,
            TaskPushNotificationConfig,
            _v1("CreateTaskPushNotificationConfig", ("POST", _PUSH)),
            _v03(
                "tasks/pushNotificationConfig/set",
                "CreateTaskPushNotificationConfig",
                ("POST", "/v1" + _PUSH),  # REFERENCE D12
            ),
            capability=Capability.PUSH_NOTIFICATIONS,
        ),
        _spec(
            Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
            GetTaskPushNotificationConfigRequest,
            TaskPushNotificationConfig,
            _v1("GetTaskPushNotificationConfig", ("GET", _PUSH + "/{id}")),
            _v03(
                "tasks/pushNotificationConfig/get",
                "GetTaskPushNotificationConfig",
                ("GET", "/v1" + _PUSH + "/{id}"),
            ),
            capability=Capability.PUSH_NOTIFICATIONS,
            idempotent=True,
        ),
        _spec(
            Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            ListTaskPushNotificationConfigsRequest,
            ListTaskPushNotificationConfigsResponse,
            _v1("ListTaskPushNotificationConfigs", ("GET", _PUSH)),
            _v03(
                "tasks/pushNotificationConfig/list",
                "ListTaskPushNotificationConfig",
                ("GET", "/v1" + _PUSH),
            ),
            capability=Capability.PUSH_NOTIFICATIONS,
            idempotent=True,
        ),
        _spec(
            Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            DeleteTaskPushNotificationConfigRequest,
            None,  # empty
            _v1("DeleteTaskPushNotificationConfig", ("DELETE", _PUSH + "/{id}")),
            _v03(
                "tasks/pushNotificationConfig/delete",
                "DeleteTaskPushNotificationConfig",
                ("DELETE", "/v1" + _PUSH + "/{id}"),
            ),
            capability=Capability.PUSH_NOTIFICATIONS,
            idempotent=True,
        ),
        _spec(
            Operation.GET_EXTENDED_AGENT_CARD,
            GetExtendedAgentCardRequest,
            AgentCard,
            _v1("GetExtendedAgentCard", ("GET", "/extendedAgentCard")),
            _v03("agent/getAuthenticatedExtendedCard", "GetAgentCard", ("GET", "/v1/card")),
            capability=Capability.EXTENDED_AGENT_CARD,
            idempotent=True,
        ),
    )
}

JSONRPC_METHODS: Mapping[str, tuple[Operation, Version]] = {
    binding.jsonrpc_method: (spec.operation, version)
    for spec in OPERATIONS.values()
    for version, binding in spec.bindings.items()
    if released_form(version) is version
}
"""JSON-RPC method name to (operation, version): the method family tells the version (a
draft's request names its released version's methods: `negotiation.released_form`)."""


def has_capability(card: AgentCard, capability: Capability) -> bool:
    """Whether the card declares the capability (absent means no)."""
    return bool(getattr(card.capabilities, capability.value))


def require_capability(card: AgentCard, operation: Operation) -> None:
    """Raise the spec error if the card lacks the operation's capability (R-CAP-1, §6.4)."""
    capability = OPERATIONS[operation].capability
    if capability is None or has_capability(card, capability):
        return
    if capability is Capability.PUSH_NOTIFICATIONS:
        raise PushNotificationNotSupportedError("This agent does not support push notifications")
    what = "streaming" if capability is Capability.STREAMING else "an extended agent card"
    raise UnsupportedOperationError(f"This agent does not declare {what}")
