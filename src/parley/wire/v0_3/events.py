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
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import InternalError
from parley.wire.json_codec import ContentReaders
from parley.wire.v0_3.content import (
    WRITERS,
    decode_artifact,
    decode_message,
    decode_status,
    decode_task,
    encode_message,
    encode_task,
    kinded_ids,
)
from parley.wire.v0_3.fields import (
    Obj,
    flag,
    kind_error,
    nested,
    optional_metadata,
)

encode_status_update = WRITERS.status_event
"""`final` is derived: true when the state ends a stream (terminal or interrupted)."""
encode_artifact_update = WRITERS.artifact_event


def decode_status_update(value: Any) -> TaskStatusUpdateEvent:
    """`final` is ignored: the model derives it from the state."""
    task_id, context_id = kinded_ids(value, "status-update", "taskId")
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        status=nested(value.get("status"), decode_status, "status"),
        metadata=optional_metadata(value.get("metadata")),
    )


def decode_artifact_update(value: Any) -> TaskArtifactUpdateEvent:
    task_id, context_id = kinded_ids(value, "artifact-update", "taskId")
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        artifact=nested(value.get("artifact"), decode_artifact, "artifact"),
        append=flag(value.get("append"), "append"),
        last_chunk=flag(value.get("lastChunk"), "lastChunk"),
        metadata=optional_metadata(value.get("metadata")),
    )


READERS = ContentReaders(
    message=decode_message,
    artifact=decode_artifact,
    status=decode_status,
    task=decode_task,
    status_event=decode_status_update,
    artifact_event=decode_artifact_update,
)
"""The 0.3 JSON-RPC readers of the content types (`content.WRITERS`' counterparts)."""


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
