"""Stream events in the 0.3 proto's JSON form: `StreamResponse` (`task`, `message`,
`statusUpdate` with the derived `final`, `artifactUpdate`) and `SendMessageResponse`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley.model import (
    Message,
    SendMessageResult,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import InternalError
from parley.protocol.lifecycle import ends_stream
from parley.wire.reader import Obj, nested, opt_bool, req_str, struct
from parley.wire.v0_3.rest.content import (
    decode_artifact,
    decode_message,
    decode_status,
    decode_task,
    encode_artifact,
    encode_message,
    encode_status,
    encode_task,
)
from parley.wire.v0_3.rest.fields import free, obj, one_of, required

FINAL = {state: ends_stream(state) for state in TaskState}
"""The proto's `final` flag per state: true when the state ends a stream."""


def encode_status_update(event: TaskStatusUpdateEvent) -> Obj:
    """`final` is derived from the state and always written (also when false)."""
    out: Obj = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": encode_status(event.status),
        "final": FINAL[event.status.state],
    }
    if event.metadata is not None:
        out["metadata"] = free(event.metadata)
    return out


def decode_status_update(value: Any) -> TaskStatusUpdateEvent:
    """`final` is ignored: the model derives it from the state."""
    d = obj(value)
    return TaskStatusUpdateEvent(
        task_id=req_str(d, "taskId", "", "task_id"),
        context_id=req_str(d, "contextId", "", "context_id"),
        status=required("status", decode_status, d.get("status")),
        metadata=struct(d, "metadata", ""),
    )


def encode_artifact_update(event: TaskArtifactUpdateEvent) -> Obj:
    out: Obj = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": encode_artifact(event.artifact),
    }
    if event.append:
        out["append"] = True
    if event.last_chunk:
        out["lastChunk"] = True
    if event.metadata is not None:
        out["metadata"] = free(event.metadata)
    return out


def decode_artifact_update(value: Any) -> TaskArtifactUpdateEvent:
    d = obj(value)
    return TaskArtifactUpdateEvent(
        task_id=req_str(d, "taskId", "", "task_id"),
        context_id=req_str(d, "contextId", "", "context_id"),
        artifact=required("artifact", decode_artifact, d.get("artifact")),
        append=bool(opt_bool(d, "append", "")),
        last_chunk=bool(opt_bool(d, "lastChunk", "", "last_chunk")),
        metadata=struct(d, "metadata", ""),
    )


# --- the oneof wrappers ----------------------------------------------------------------------


def encode_event(event: StreamEvent) -> Obj:
    """A `StreamResponse`: the event under its oneof member's JSON name."""
    if type(event) is TaskStatusUpdateEvent:
        return {"statusUpdate": encode_status_update(event)}
    if type(event) is TaskArtifactUpdateEvent:
        return {"artifactUpdate": encode_artifact_update(event)}
    if type(event) is Task:
        return {"task": encode_task(event)}
    if type(event) is Message:
        return {"message": encode_message(event)}
    raise InternalError(f"Not a stream event: {type(event).__name__}")


# (JSON name, proto name) of each member; the message member's proto name is `msg`.
_EVENT_MEMBERS = (
    ("task", None),
    ("message", "msg"),
    ("statusUpdate", "status_update"),
    ("artifactUpdate", "artifact_update"),
)
_EVENT_DECODERS: dict[str, Callable[[Any], StreamEvent]] = {
    "task": decode_task,
    "message": decode_message,
    "statusUpdate": decode_status_update,
    "artifactUpdate": decode_artifact_update,
}


def decode_event(value: Any) -> StreamEvent:
    """A `StreamResponse`: exactly one of task, message, statusUpdate, artifactUpdate."""
    key, inner = one_of(obj(value), _EVENT_MEMBERS)
    return nested(key, _EVENT_DECODERS[key], inner)


def encode_send_result(result: SendMessageResult) -> Obj:
    """A `SendMessageResponse`: `{"task": ...}` or `{"message": ...}`."""
    if type(result) is Task:
        return {"task": encode_task(result)}
    if type(result) is Message:
        return {"message": encode_message(result)}
    raise InternalError(f"SendMessage returns a Task or a Message, not {type(result).__name__}")


def decode_send_result(value: Any) -> SendMessageResult:
    key, inner = one_of(obj(value), _EVENT_MEMBERS[:2])
    if key == "task":
        return nested(key, decode_task, inner)
    return nested(key, decode_message, inner)
