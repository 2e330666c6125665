"""Stream events in their 0.3 JSON-RPC form: bare Task, Message, `status-update` (with
the derived `final`) and `artifact-update`, told apart by `kind`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley.model import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import InternalError
from parley.protocol.lifecycle import ends_stream
from parley.wire.v0_3.content import (
    decode_artifact,
    decode_message,
    decode_status,
    decode_task,
    encode_artifact,
    encode_message,
    encode_status,
    encode_task,
)
from parley.wire.v0_3.fields import (
    Obj,
    flag,
    ident,
    json_object,
    kind_error,
    nested,
    optional_metadata,
)

FINAL = {state: ends_stream(state) for state in TaskState}
"""0.3's `final` flag per state: true when the state ends a stream."""


def encode_status_update(event: TaskStatusUpdateEvent) -> Obj:
    """`final` is derived: true when the state ends a stream (terminal or interrupted)."""
    out: Obj = {
        "kind": "status-update",
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": encode_status(event.status),
        "final": FINAL[event.status.state],
    }
    if event.metadata is not None:
        out["metadata"] = json_object(event.metadata)
    return out


def decode_status_update(value: Any) -> TaskStatusUpdateEvent:
    """`final` is ignored: the model derives it from the state."""
    if type(value) is not dict or value.get("kind") != "status-update":
        kind_error(value, "'status-update'")
    return TaskStatusUpdateEvent(
        task_id=ident(value, "taskId"),
        context_id=ident(value, "contextId"),
        status=nested(value.get("status"), decode_status, "status"),
        metadata=optional_metadata(value.get("metadata")),
    )


def encode_artifact_update(event: TaskArtifactUpdateEvent) -> Obj:
    out: Obj = {
        "kind": "artifact-update",
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": encode_artifact(event.artifact),
    }
    if event.append:
        out["append"] = True
    if event.last_chunk:
        out["lastChunk"] = True
    if event.metadata is not None:
        out["metadata"] = json_object(event.metadata)
    return out


def decode_artifact_update(value: Any) -> TaskArtifactUpdateEvent:
    if type(value) is not dict or value.get("kind") != "artifact-update":
        kind_error(value, "'artifact-update'")
    return TaskArtifactUpdateEvent(
        task_id=ident(value, "taskId"),
        context_id=ident(value, "contextId"),
        artifact=nested(value.get("artifact"), decode_artifact, "artifact"),
        append=flag(value.get("append"), "append"),
        last_chunk=flag(value.get("lastChunk"), "lastChunk"),
        metadata=optional_metadata(value.get("metadata")),
    )


def encode_event(event: StreamEvent) -> Obj:
    if type(event) is TaskStatusUpdateEvent:
        return encode_status_update(event)
    if type(event) is TaskArtifactUpdateEvent:
        return encode_artifact_update(event)
    if type(event) is Task:
        return encode_task(event)
    if type(event) is Message:
        return encode_message(event)
    raise InternalError(f"Not a stream event: {type(event).__name__}")


EVENT_DECODERS: dict[str, Callable[[Any], StreamEvent]] = {
    "status-update": decode_status_update,
    "artifact-update": decode_artifact_update,
    "task": decode_task,
    "message": decode_message,
}


def decode_event(value: Any) -> StreamEvent:
    """A Task, Message, status-update or artifact-update, told apart by `kind`."""
    kind = value.get("kind") if type(value) is dict else None
    decoder = EVENT_DECODERS.get(kind) if type(kind) is str else None
    if decoder is None:
        kind_error(value, "'task', 'message', 'status-update' or 'artifact-update'")
    return decoder(value)


def decode_result(value: Any) -> Task | Message:
    """The result of message/send: a bare Task or Message, told apart by `kind`."""
    kind = value.get("kind") if type(value) is dict else None
    if kind == "task":
        return decode_task(value)
    if kind == "message":
        return decode_message(value)
    kind_error(value, "'task' or 'message'")
