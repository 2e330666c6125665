"""Messages, task status, artifacts and tasks in their 0.3 JSON-RPC form (camelCase,
`kind` discriminators, kebab-case enums).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NoReturn

from parley.model import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from parley.wire.content_writers import content_writers
from parley.wire.reader import fail, listed, timestamp
from parley.wire.v0_3.fields import (
    Obj,
    ident,
    kind_error,
    nested,
    obj,
    optional_metadata,
    optional_text,
    strings,
)
from parley.wire.v0_3.parts import decode_parts, encode_parts

ROLE_NAMES = {Role.USER: "user", Role.AGENT: "agent"}
ROLES = {name: role for role, name in ROLE_NAMES.items()}
STATE_NAMES = {
    TaskState.UNSPECIFIED: "unknown",
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
}
STATES = {name: state for state, name in STATE_NAMES.items()}

WRITERS = content_writers(
    encode_parts,
    ROLE_NAMES,
    STATE_NAMES,
    kinds=True,
    artifact_parts_first=True,
    final=True,
)
"""The 0.3 JSON-RPC writers: each object with its `kind`, an artifact's parts after its id."""
encode_message = WRITERS.message
encode_status = WRITERS.status
encode_artifact = WRITERS.artifact
encode_task = WRITERS.task

# --- messages ----------------------------------------------------------------------------


def decode_message(value: Any) -> Message:
    if type(value) is not dict or value.get("kind") != "message":
        kind_error(value, "'message'")
    get = value.get
    message_id = get("messageId")
    role_name = get("role")
    role = ROLES.get(role_name) if type(role_name) is str else None
    if type(message_id) is not str or not message_id or role is None:
        _bad_message(value)
    parts = decode_parts(get("parts"))
    context_id = get("contextId")
    task_id = get("taskId")
    if (
        get("metadata") is None
        and get("extensions") is None
        and get("referenceTaskIds") is None
        and (context_id is None or type(context_id) is str)
        and (task_id is None or type(task_id) is str)
    ):
        return Message(
            message_id=message_id,
            role=role,
            parts=parts,
            context_id=context_id or "",
            task_id=task_id or "",
        )
    return _full_message(value, message_id, role, parts)


def _bad_message(d: Obj) -> NoReturn:
    ident(d, "messageId")
    fail("", "role", "is required" if d.get("role") is None else "expected 'user' or 'agent'")


def _full_message(d: Obj, message_id: str, role: Role, parts: tuple[Part, ...]) -> Message:
    return Message(
        message_id=message_id,
        role=role,
        parts=parts,
        context_id=optional_text(d.get("contextId"), "contextId"),
        task_id=optional_text(d.get("taskId"), "taskId"),
        metadata=optional_metadata(d.get("metadata")),
        extensions=strings(d.get("extensions"), "extensions"),
        reference_task_ids=strings(d.get("referenceTaskIds"), "referenceTaskIds"),
    )


# --- status, artifacts, tasks --------------------------------------------------------------


def decode_status(value: Any) -> TaskStatus:
    d = obj(value)
    name = d.get("state")
    state = STATES.get(name) if type(name) is str else None
    if state is None:
        fail("", "state", "is required" if name is None else "expected a task state")
    message = d.get("message")
    moment = d.get("timestamp")
    return TaskStatus(
        state=state,
        message=None if message is None else nested(message, decode_message, "message"),
        timestamp=None if moment is None else _timestamp(moment, d),
    )


def _timestamp(moment: Any, d: Obj) -> datetime | None:
    """RFC 3339, zone-less read as UTC. The canonical `YYYY-MM-DDTHH:MM:SS.mmmZ` takes a
    fast path; anything else goes to the shared reader."""
    if (
        type(moment) is str
        and len(moment) == 24
        and moment[23] == "Z"
        and moment[4] == moment[7] == "-"
        and moment[10] == "T"
        and moment[13] == moment[16] == ":"
        and moment[19] == "."
    ):
        try:
            return datetime.fromisoformat(moment)
        except ValueError:
            pass
    try:
        return timestamp(d, "timestamp", "")
    except OverflowError:  # a valid-looking time that leaves datetime's range once in UTC
        fail("", "timestamp", "out of range")


def decode_artifact(value: Any) -> Artifact:
    d = obj(value)
    artifact_id = ident(d, "artifactId")
    parts = decode_parts(d.get("parts"))
    name = d.get("name")
    description = d.get("description")
    if (
        d.get("metadata") is None
        and d.get("extensions") is None
        and (name is None or type(name) is str)
        and (description is None or type(description) is str)
    ):
        return Artifact(
            artifact_id=artifact_id, parts=parts, name=name or "", description=description or ""
        )
    return Artifact(
        artifact_id=artifact_id,
        parts=parts,
        name=optional_text(name, "name"),
        description=optional_text(description, "description"),
        metadata=optional_metadata(d.get("metadata")),
        extensions=strings(d.get("extensions"), "extensions"),
    )


def kinded_ids(value: Any, kind: str, id_key: str) -> tuple[str, str]:
    """The id (under `id_key`) and `contextId` of an object of `kind`, both required and
    non-empty; the kind is checked first, then the id, then the context id."""
    if type(value) is not dict or value.get("kind") != kind:
        kind_error(value, f"'{kind}'")
    first, context_id = value.get(id_key), value.get("contextId")
    if type(first) is str and first and type(context_id) is str and context_id:
        return first, context_id
    return ident(value, id_key), ident(value, "contextId")


def decode_task(value: Any) -> Task:
    task_id, context_id = kinded_ids(value, "task", "id")
    return Task(
        id=task_id,
        context_id=context_id,
        status=nested(value.get("status"), decode_status, "status"),
        artifacts=listed("artifacts", decode_artifact, value.get("artifacts")),
        history=listed("history", decode_message, value.get("history")),
        metadata=optional_metadata(value.get("metadata")),
    )
