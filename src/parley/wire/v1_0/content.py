"""The 1.0 wire form of content: parts, messages, artifacts, task status, tasks, and
stream events with their `StreamResponse` wrapper. Hot paths: direct dict access.
"""

from __future__ import annotations

from typing import Any

from parley.model import (
    Artifact,
    DataPart,
    Message,
    Part,
    RawPart,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)
from parley.protocol.errors import InternalError
from parley.wire.limits import active
from parley.wire.reader import (
    Obj,
    b64decode,
    b64encode,
    check_depth,
    fail,
    format_timestamp,
    listed,
    nested,
    opt_bool,
    opt_str,
    req_str,
    str_list,
    struct,
)
from parley.wire.v1_0.fields import (
    ROLE_NAMES,
    STATE_NAMES,
    free,
    moment,
    one_of,
    required,
    role,
    state,
)

# ---------------------------------------------------------------- parts


def encode_part(part: Part) -> Obj:
    if type(part) is TextPart:
        out: Obj = {"text": part.text}
    elif type(part) is DataPart:
        out = {"data": part.data}
    elif type(part) is UrlPart:
        out = {"url": part.url}
    elif type(part) is RawPart:
        out = {"raw": b64encode(part.raw)}
    else:
        raise InternalError(f"Not a part: {type(part).__name__}")
    if part.media_type:
        out["mediaType"] = part.media_type
    if part.filename:
        out["filename"] = part.filename
    if part.metadata is not None:
        out["metadata"] = free(part.metadata)
    return out


def decode_part(value: Any) -> Part:
    """Exactly one of text/raw/url/data; `{"data": null}` is data holding JSON null."""
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    d = value
    text, raw, url = d.get("text"), d.get("raw"), d.get("url")
    if (text is not None) + (raw is not None) + (url is not None) + ("data" in d) != 1:
        fail("", "", "exactly one of text, raw, url and data is required")
    media, filename, metadata = ("", "", None) if len(d) == 1 else _part_extras(d)
    if text is not None:
        if type(text) is not str:
            fail("", "text", "expected a string")
        return TextPart(text=text, media_type=media, filename=filename, metadata=metadata)
    if url is not None:
        if type(url) is not str:
            fail("", "url", "expected a string")
        return UrlPart(url=url, media_type=media, filename=filename, metadata=metadata)
    if raw is not None:
        data = b64decode(raw, "", "raw")
        return RawPart(raw=data, media_type=media, filename=filename, metadata=metadata)
    data = d["data"]
    if type(data) is dict or type(data) is list:
        check_depth(data, "data")
    return DataPart(data=data, media_type=media, filename=filename, metadata=metadata)


def _part_extras(d: Obj) -> tuple[str, str, Any]:
    media = d.get("mediaType")
    if type(media) is not str:
        media = opt_str(d, "mediaType", "", "media_type")
    filename = d.get("filename")
    if type(filename) is not str:
        filename = opt_str(d, "filename", "")
    metadata = d.get("metadata")
    if metadata is not None:
        metadata = struct(d, "metadata", "")
    return media, filename, metadata


def decode_parts(value: Any) -> tuple[Part, ...]:
    """A REQUIRED list of at least one part."""
    if type(value) is not list or not value:
        missing = value is None or type(value) is list
        fail("", "parts", "at least one part is required" if missing else "expected a list")
    if len(value) > active().max_parts:
        fail("", "parts", f"more than {active().max_parts} parts")
    return listed("parts", decode_part, value)


# ---------------------------------------------------------------- messages


def encode_message(message: Message) -> Obj:
    out: Obj = {
        "messageId": message.message_id,
        "role": ROLE_NAMES[message.role],
        "parts": [encode_part(part) for part in message.parts],
    }
    if message.context_id:
        out["contextId"] = message.context_id
    if message.task_id:
        out["taskId"] = message.task_id
    if message.metadata is not None:
        out["metadata"] = free(message.metadata)
    if message.extensions:
        out["extensions"] = list(message.extensions)
    if message.reference_task_ids:
        out["referenceTaskIds"] = list(message.reference_task_ids)
    return out


def decode_message(value: Any) -> Message:
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    d = value
    message_id = d.get("messageId")
    if type(message_id) is not str or not message_id:
        message_id = req_str(d, "messageId", "", "message_id")
    context_id = d.get("contextId")
    if type(context_id) is not str:
        context_id = opt_str(d, "contextId", "", "context_id")
    task_id = d.get("taskId")
    if type(task_id) is not str:
        task_id = opt_str(d, "taskId", "", "task_id")
    metadata = d.get("metadata")
    if metadata is not None:
        metadata = struct(d, "metadata", "")
    return Message(
        message_id=message_id,
        role=role(d.get("role")),
        parts=decode_parts(d.get("parts")),
        context_id=context_id,
        task_id=task_id,
        metadata=metadata,
        extensions=str_list(d, "extensions", "") if "extensions" in d else (),
        reference_task_ids=_reference_task_ids(d),
    )


def _reference_task_ids(d: Obj) -> tuple[str, ...]:
    if "referenceTaskIds" in d or "reference_task_ids" in d:
        return str_list(d, "referenceTaskIds", "", "reference_task_ids")
    return ()


# ---------------------------------------------------------------- artifacts and tasks


def encode_artifact(artifact: Artifact, parts: Any = None) -> Obj:
    out: Obj = {"artifactId": artifact.artifact_id}
    if artifact.name:
        out["name"] = artifact.name
    if artifact.description:
        out["description"] = artifact.description
    out["parts"] = [encode_part(part) for part in artifact.parts] if parts is None else parts
    if artifact.metadata is not None:
        out["metadata"] = free(artifact.metadata)
    if artifact.extensions:
        out["extensions"] = list(artifact.extensions)
    return out


def decode_artifact(value: Any) -> Artifact:
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    d = value
    artifact_id = d.get("artifactId")
    if type(artifact_id) is not str or not artifact_id:
        artifact_id = req_str(d, "artifactId", "", "artifact_id")
    name = d.get("name")
    if type(name) is not str:
        name = opt_str(d, "name", "")
    description = d.get("description")
    if type(description) is not str:
        description = opt_str(d, "description", "")
    metadata = d.get("metadata")
    if metadata is not None:
        metadata = struct(d, "metadata", "")
    return Artifact(
        artifact_id=artifact_id,
        parts=decode_parts(d.get("parts")),
        name=name,
        description=description,
        metadata=metadata,
        extensions=str_list(d, "extensions", "") if "extensions" in d else (),
    )


def encode_status(status: TaskStatus) -> Obj:
    out: Obj = {"state": STATE_NAMES[status.state]}
    if status.message is not None:
        out["message"] = encode_message(status.message)
    if status.timestamp is not None:
        out["timestamp"] = format_timestamp(status.timestamp)
    return out


def decode_status(value: Any) -> TaskStatus:
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    message = value.get("message")
    return TaskStatus(
        state=state(value.get("state")),
        message=None if message is None else nested("message", decode_message, message),
        timestamp=None if value.get("timestamp") is None else moment(value, "timestamp"),
    )


def encode_task(task: Task, status: Any = None, history: Any = None) -> Obj:
    """A Task; `contextId` is always emitted (REFERENCE §4.4)."""
    out: Obj = {
        "id": task.id,
        "contextId": task.context_id,
        "status": encode_status(task.status) if status is None else status,
    }
    if task.artifacts:
        out["artifacts"] = [encode_artifact(artifact) for artifact in task.artifacts]
    if task.history:
        out["history"] = history or [encode_message(message) for message in task.history]
    if task.metadata is not None:
        out["metadata"] = free(task.metadata)
    return out


def decode_task(value: Any) -> Task:
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    d = value
    task_id = d.get("id")
    if type(task_id) is not str or not task_id:
        task_id = req_str(d, "id", "")
    context_id = d.get("contextId")
    if type(context_id) is not str:
        context_id = opt_str(d, "contextId", "", "context_id")
    metadata = d.get("metadata")
    if metadata is not None:
        metadata = struct(d, "metadata", "")
    return Task(
        id=task_id,
        context_id=context_id,
        status=required("status", decode_status, d.get("status")),
        artifacts=listed("artifacts", decode_artifact, d.get("artifacts")),
        history=listed("history", decode_message, d.get("history")),
        metadata=metadata,
    )


# ---------------------------------------------------------------- stream events


def encode_status_event(event: TaskStatusUpdateEvent, status: Any = None) -> Obj:
    out: Obj = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": encode_status(event.status) if status is None else status,
    }
    if event.metadata is not None:
        out["metadata"] = free(event.metadata)
    return out


def decode_status_event(value: Any) -> TaskStatusUpdateEvent:
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    d = value
    task_id, context_id = _event_ids(d)
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        status=required("status", decode_status, d.get("status")),
        metadata=None if d.get("metadata") is None else struct(d, "metadata", ""),
    )


def encode_artifact_event(event: TaskArtifactUpdateEvent, parts: Any = None) -> Obj:
    out: Obj = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": encode_artifact(event.artifact, parts),
    }
    if event.append:
        out["append"] = True
    if event.last_chunk:
        out["lastChunk"] = True
    if event.metadata is not None:
        out["metadata"] = free(event.metadata)
    return out


def decode_artifact_event(value: Any) -> TaskArtifactUpdateEvent:
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    d = value
    task_id, context_id = _event_ids(d)
    append = d.get("append")
    last_chunk = d.get("lastChunk")
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        artifact=required("artifact", decode_artifact, d.get("artifact")),
        append=append if type(append) is bool else bool(opt_bool(d, "append", "")),
        last_chunk=(
            last_chunk
            if type(last_chunk) is bool
            else bool(opt_bool(d, "lastChunk", "", "last_chunk"))
        ),
        metadata=None if d.get("metadata") is None else struct(d, "metadata", ""),
    )


def _event_ids(d: Obj) -> tuple[str, str]:
    task_id = d.get("taskId")
    if type(task_id) is not str or not task_id:
        task_id = req_str(d, "taskId", "", "task_id")
    context_id = d.get("contextId")
    if type(context_id) is not str or not context_id:
        context_id = req_str(d, "contextId", "", "context_id")
    return task_id, context_id


def encode_event(
    event: StreamEvent, status: Any = None, history: Any = None, parts: Any = None
) -> Obj:
    """A `StreamResponse`: the event under its oneof member name. `status` (a task's or a
    status update's), `history` (a task's), `parts` (an artifact update's): their encodings,
    if already made (e.g. `wire.json.fragment`s of stored rows), put in as they are."""
    if type(event) is TaskStatusUpdateEvent:
        return {"statusUpdate": encode_status_event(event, status)}
    if type(event) is TaskArtifactUpdateEvent:
        return {"artifactUpdate": encode_artifact_event(event, parts)}
    if type(event) is Task:
        return {"task": encode_task(event, status, history)}
    if type(event) is Message:
        return {"message": encode_message(event)}
    raise InternalError(f"Not a stream event: {type(event).__name__}")


_EVENT_MEMBERS = (
    ("task", None),
    ("message", None),
    ("statusUpdate", "status_update"),
    ("artifactUpdate", "artifact_update"),
)
_EVENT_DECODERS: dict[str, Any] = {
    "task": decode_task,
    "message": decode_message,
    "statusUpdate": decode_status_event,
    "artifactUpdate": decode_artifact_event,
}


def decode_event(value: Any) -> StreamEvent:
    """A `StreamResponse`: exactly one of task, message, statusUpdate, artifactUpdate."""
    if type(value) is not dict:
        fail("", "", "expected a JSON object")
    if len(value) == 1:  # the usual shape: one camelCase member
        ((key, inner),) = value.items()
        decoder = _EVENT_DECODERS.get(key)
        if decoder is not None and inner is not None:
            event: StreamEvent = nested(key, decoder, inner)
            return event
    key, inner = one_of(value, _EVENT_MEMBERS)
    event = nested(key, _EVENT_DECODERS[key], inner)
    return event
