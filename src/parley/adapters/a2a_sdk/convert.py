"""The a2a-sdk's protobuf objects ⇄ Parley's model, at the adapter's edge. Both speak the
1.0 proto (`lf.a2a.v1`), so the 1.0 protobuf codec's direct routes read and write the SDK's
messages field by field; anything of an unusual shape takes the reference route, its
ProtoJSON form and the 1.0 JSON codec, whose validation and error naming then apply to
what an executor emits (as `parley.wire.protobuf_codec` does for the gRPC binding).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from a2a.types import a2a_pb2 as sdk
from a2a.utils import errors as sdk_errors
from google.protobuf import json_format

from parley.model import (
    AgentCard,
    AgentInterface,
    Artifact,
    JSONObject,
    Message,
    SendMessageRequest,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.protocol import errors
from parley.protocol.negotiation import Version
from parley.server.execution import RequestContext
from parley.wire.protobuf import UnusualShapeError, optional_struct, timestamp_datetime
from parley.wire.v1_0 import CODEC
from parley.wire.v1_0.protobuf_codec import fill_send, fill_task, read_message, read_part

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
    read = _READERS.get(type(value))
    if read is None:
        raise errors.InvalidAgentResponseError(
            f"An executor enqueues a Message, Task or task update, not {type(value).__name__}"
        )
    try:
        return read(value, task_id, context_id)
    except UnusualShapeError:
        return _by_json(value, task_id, context_id)


def _by_json(value: Any, task_id: str, context_id: str) -> StreamEvent:
    kind = _EVENTS[type(value)]
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


def _status(value: Any) -> TaskStatus:
    state = int(value.state)
    if state not in _STATES:
        raise UnusualShapeError
    message = read_message(value.message) if value.HasField("message") else None
    moment = timestamp_datetime(value.timestamp) if value.HasField("timestamp") else None
    return TaskStatus(state=TaskState(state), message=message, timestamp=moment)


def _artifact(value: Any) -> Artifact:
    if not value.artifact_id or not value.parts:
        raise UnusualShapeError
    return Artifact(
        artifact_id=value.artifact_id,
        parts=tuple(map(read_part, value.parts)),
        name=value.name,
        description=value.description,
        metadata=optional_struct(value, "metadata"),
        extensions=tuple(value.extensions),
    )


def _message(value: Any, task_id: str, context_id: str) -> Message:
    return read_message(value)


def _status_event(value: Any, task_id: str, context_id: str) -> TaskStatusUpdateEvent:
    if not value.HasField("status"):
        raise UnusualShapeError
    return TaskStatusUpdateEvent(
        task_id=value.task_id or task_id,
        context_id=value.context_id or context_id,
        status=_status(value.status),
        metadata=optional_struct(value, "metadata"),
    )


def _artifact_event(value: Any, task_id: str, context_id: str) -> TaskArtifactUpdateEvent:
    if not value.HasField("artifact"):
        raise UnusualShapeError
    return TaskArtifactUpdateEvent(
        task_id=value.task_id or task_id,
        context_id=value.context_id or context_id,
        artifact=_artifact(value.artifact),
        append=value.append,
        last_chunk=value.last_chunk,
        metadata=optional_struct(value, "metadata"),
    )


def _task(value: Any, task_id: str, context_id: str) -> Task:
    """A snapshot starting a task: the runner takes its status, artifacts and metadata
    (the history is the task's own), so those are what is read here."""
    if not value.id or not value.HasField("status"):
        raise UnusualShapeError
    return Task(
        id=value.id,
        context_id=value.context_id,
        status=_status(value.status),
        artifacts=tuple(map(_artifact, value.artifacts)),
        metadata=optional_struct(value, "metadata"),
    )


_READERS: dict[type[Any], Callable[[Any, str, str], StreamEvent]] = {
    sdk.Message: _message,
    sdk.Task: _task,
    sdk.TaskStatusUpdateEvent: _status_event,
    sdk.TaskArtifactUpdateEvent: _artifact_event,
}
_STATES = frozenset(state.value for state in TaskState if state is not TaskState.UNSPECIFIED)


def request(context: RequestContext) -> Any:
    """The SDK's SendMessageRequest for a run of Parley's `RequestContext`."""
    model = SendMessageRequest(
        message=context.message,
        configuration=context.configuration,
        metadata=cast("JSONObject | None", context.metadata),
    )
    target = sdk.SendMessageRequest()
    fill_send(target, model)
    return target


def task(value: Task) -> Any:
    target = sdk.Task()
    fill_task(target, value)
    return target


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
