"""Messages, task status, artifacts and tasks in the 0.3 proto's JSON form: parts under
`content` in a message, `TaskStatus.update` written as `message`, no `kind`.
"""

from __future__ import annotations

from typing import Any

from parley.model import Artifact, Message, Task, TaskStatus
from parley.wire.reader import (
    Obj,
    field,
    format_timestamp,
    listed,
    nested,
    opt_str,
    req_str,
    str_list,
    struct,
)
from parley.wire.v0_3.rest.fields import (
    ROLE_NAMES,
    STATE_NAMES,
    free,
    moment,
    obj,
    required,
    role,
    state,
)
from parley.wire.v0_3.rest.parts import decode_parts, encode_parts

# --- messages ------------------------------------------------------------------------------


def encode_message(message: Message) -> Obj:
    """`referenceTaskIds` has no place in the 0.3 proto: dropped."""
    out: Obj = {"messageId": message.message_id}
    if message.context_id:
        out["contextId"] = message.context_id
    if message.task_id:
        out["taskId"] = message.task_id
    out["role"] = ROLE_NAMES[message.role]
    out["content"] = encode_parts(message.parts)
    if message.metadata is not None:
        out["metadata"] = free(message.metadata)
    if message.extensions:
        out["extensions"] = list(message.extensions)
    return out


def decode_message(value: Any) -> Message:
    """Hot path: direct access by JSON name; the shared readers (proto names, errors)
    only when a value is missing or odd."""
    d = obj(value)
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
    return Message(
        message_id=message_id,
        role=role(d.get("role")),
        parts=decode_parts(d, "content"),
        context_id=context_id,
        task_id=task_id,
        metadata=None if metadata is None else struct(d, "metadata", ""),
        extensions=str_list(d, "extensions", "") if "extensions" in d else (),
    )


# --- status, artifacts, tasks --------------------------------------------------------------


def encode_status(status: TaskStatus) -> Obj:
    out: Obj = {"state": STATE_NAMES[status.state]}
    if status.message is not None:
        out["message"] = encode_message(status.message)
    if status.timestamp is not None:
        out["timestamp"] = format_timestamp(status.timestamp)
    return out


def decode_status(value: Any) -> TaskStatus:
    """The message is read under its JSON name `message` or its proto name `update`."""
    d = obj(value)
    message = field(d, "message", "update")
    return TaskStatus(
        state=state(d.get("state")),
        message=None if message is None else nested("message", decode_message, message),
        timestamp=moment(d, "timestamp"),
    )


def encode_artifact(artifact: Artifact) -> Obj:
    out: Obj = {"artifactId": artifact.artifact_id}
    if artifact.name:
        out["name"] = artifact.name
    if artifact.description:
        out["description"] = artifact.description
    out["parts"] = encode_parts(artifact.parts)
    if artifact.metadata is not None:
        out["metadata"] = free(artifact.metadata)
    if artifact.extensions:
        out["extensions"] = list(artifact.extensions)
    return out


def decode_artifact(value: Any) -> Artifact:
    d = obj(value)
    artifact_id = d.get("artifactId")
    if type(artifact_id) is not str or not artifact_id:
        artifact_id = req_str(d, "artifactId", "", "artifact_id")
    name = d.get("name")
    description = d.get("description")
    metadata = d.get("metadata")
    return Artifact(
        artifact_id=artifact_id,
        parts=decode_parts(d, "parts"),
        name=name if type(name) is str else opt_str(d, "name", ""),
        description=description if type(description) is str else opt_str(d, "description", ""),
        metadata=None if metadata is None else struct(d, "metadata", ""),
        extensions=str_list(d, "extensions", "") if "extensions" in d else (),
    )


def encode_task(task: Task) -> Obj:
    """`contextId` is always written (it is required in every other form of a task)."""
    out: Obj = {"id": task.id, "contextId": task.context_id, "status": encode_status(task.status)}
    if task.artifacts:
        out["artifacts"] = [encode_artifact(artifact) for artifact in task.artifacts]
    if task.history:
        out["history"] = [encode_message(message) for message in task.history]
    if task.metadata is not None:
        out["metadata"] = free(task.metadata)
    return out


def decode_task(value: Any) -> Task:
    """An absent `contextId` is empty (ProtoJSON writers drop empty strings)."""
    d = obj(value)
    return Task(
        id=req_str(d, "id", ""),
        context_id=opt_str(d, "contextId", "", "context_id"),
        status=required("status", decode_status, d.get("status")),
        artifacts=listed("artifacts", decode_artifact, d.get("artifacts")),
        history=listed("history", decode_message, d.get("history")),
        metadata=struct(d, "metadata", ""),
    )
