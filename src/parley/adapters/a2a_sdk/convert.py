"""The a2a-sdk's protobuf objects ⇄ Parley's model, at the adapter's edge. Both speak the
1.0 proto (`lf.a2a.v1`), so each conversion goes through its ProtoJSON form and the 1.0
JSON codec: the codec's validation and error naming apply to what an executor emits.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from a2a.types import a2a_pb2 as sdk
from a2a.utils import errors as sdk_errors
from google.protobuf import json_format

from parley.model import (
    AgentCard,
    AgentInterface,
    JSONObject,
    Message,
    Model,
    SendMessageRequest,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from parley.protocol import errors
from parley.protocol.negotiation import Version
from parley.server.execution import RequestContext
from parley.wire.v1_0 import CODEC

M = TypeVar("M", bound=Model)

_EVENTS: dict[type[Any], type[StreamEvent]] = {
    sdk.Message: Message,
    sdk.Task: Task,
    sdk.TaskStatusUpdateEvent: TaskStatusUpdateEvent,
    sdk.TaskArtifactUpdateEvent: TaskArtifactUpdateEvent,
}
_UPDATES = (sdk.TaskStatusUpdateEvent, sdk.TaskArtifactUpdateEvent)

_PLACEHOLDER = AgentInterface(
    url="http://localhost", protocol_binding="JSONRPC", protocol_version=Version.V1_0.value
)
"""Stands for the interfaces of an SDK card while it is read: Parley lists its own."""


def event(value: Any, task_id: str, context_id: str) -> StreamEvent:
    """The model form of an event an executor enqueued; a task update's missing ids are
    the run's (Parley's runner fills them in the same way for its own agents)."""
    kind = _EVENTS.get(type(value))
    if kind is None:
        raise errors.InvalidAgentResponseError(
            f"An executor enqueues a Message, Task or task update, not {type(value).__name__}"
        )
    data = json_format.MessageToDict(value)
    if isinstance(value, _UPDATES):
        data.setdefault("taskId", task_id)
        data.setdefault("contextId", context_id)
    try:
        return CODEC.decode(kind, data)
    except errors.A2AError as exc:
        raise errors.InvalidAgentResponseError(
            f"The executor enqueued an invalid {kind.__name__}: {exc.message}"
        ) from None


def to_sdk(value: Model, kind: type[Any]) -> Any:
    """The a2a-sdk message of `kind` for a model object (a Message, Task, request...)."""
    return json_format.ParseDict(CODEC.encode(value), kind(), ignore_unknown_fields=True)


def request(context: RequestContext) -> Any:
    """The SDK's SendMessageRequest for a run of Parley's `RequestContext`."""
    model = SendMessageRequest(
        message=context.message,
        configuration=context.configuration,
        metadata=cast("JSONObject | None", context.metadata),
    )
    return to_sdk(model, sdk.SendMessageRequest)


def task(value: Task) -> Any:
    return to_sdk(value, sdk.Task)


def card(value: Any) -> AgentCard:
    """The model form of an SDK `AgentCard`, with a placeholder for its interfaces."""
    data = json_format.MessageToDict(value)
    data["supportedInterfaces"] = [CODEC.encode(_PLACEHOLDER)]
    return CODEC.decode_card(data)


def error(exc: BaseException) -> BaseException:
    """Parley's class of an SDK protocol error (same name, same message); anything else
    as it is."""
    if not isinstance(exc, sdk_errors.A2AError):
        return exc
    kind = getattr(errors, type(exc).__name__, None)
    if not (isinstance(kind, type) and issubclass(kind, errors.A2AError)):
        kind = errors.InternalError
    return kind(exc.message)
