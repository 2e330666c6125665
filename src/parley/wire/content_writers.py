"""The writers of content that the 0.3 JSON-RPC form and ProtoJSON (both protos) build the
same way: a message, an artifact, a task status, a task and the two stream updates. Each
form differs by its tables (part writer, role and state names) and a few flags (a leading
`kind`, member order, what only one form has); `content_writers` makes the six writers once
per form, as closures over them, so a call looks nothing up and makes no further call.

Cost (instructions under callgrind): each flag picks its writer when the writers are made
(one closure per variant), so a call tests no flag. An object's leading
members stay one dict display per head (with `kind`, without), not member by member: a
member stored after the display costs about 100 instructions more, and a head made by a
call more still.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from parley.model import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.protocol.lifecycle import ends_stream
from parley.wire.protojson.fields import free
from parley.wire.reader import Obj, format_timestamp

FINAL = {state: ends_stream(state) for state in TaskState}
"""0.3's `final` flag of a status update per state (both forms): true when it ends a stream."""


def with_metadata(out: Obj, metadata: Any) -> Obj:
    """`out` with its `metadata` member (a free-form object) last."""
    out["metadata"] = free(metadata)
    return out


class ArtifactWriter(Protocol):
    def __call__(self, artifact: Artifact, parts: Any = None) -> Obj: ...


class TaskWriter(Protocol):
    def __call__(self, task: Task, status: Any = None, history: Any = None) -> Obj: ...


class StatusEventWriter(Protocol):
    def __call__(self, event: TaskStatusUpdateEvent, status: Any = None) -> Obj: ...


class ArtifactEventWriter(Protocol):
    def __call__(self, event: TaskArtifactUpdateEvent, parts: Any = None) -> Obj: ...


class ContentWriters(NamedTuple):
    """One form's writers. `parts`, `status`, `history`: their encodings, if already made
    (e.g. `wire.json_bytes.fragment`s of stored rows), put in as they are."""

    message: Callable[[Message], Obj]
    artifact: ArtifactWriter
    status: Callable[[TaskStatus], Obj]
    task: TaskWriter
    status_event: StatusEventWriter
    artifact_event: ArtifactEventWriter


def content_writers(  # noqa: C901, PLR0915 - six closures over one form's tables
    encode_parts: Callable[[tuple[Part, ...]], list[Obj]],
    role_names: Mapping[Role, str],
    state_names: Mapping[TaskState, str],
    *,
    kinds: bool = False,
    message_parts: str = "parts",
    ids_first: bool = False,
    reference_task_ids: bool = True,
    artifact_parts_first: bool = False,
    final: bool = False,
) -> ContentWriters:
    """The writers of one form. `kinds`: each object opens with its `kind` (0.3 JSON-RPC);
    `message_parts`: a message's parts member (the 0.3 proto: `content`); `ids_first`: a
    message's `contextId` and `taskId` come before its role (the 0.3 proto's order);
    `reference_task_ids`: a message has them (not the 0.3 proto); `artifact_parts_first`:
    an artifact's parts come right after its id (0.3 JSON-RPC); `final`: a status update
    writes the derived `final`, also when false (0.3; `kinds` goes with it)."""

    def encode_message_ids_first(message: Message) -> Obj:
        out: Obj = {"messageId": message.message_id}
        if message.context_id:
            out["contextId"] = message.context_id
        if message.task_id:
            out["taskId"] = message.task_id
        out["role"] = role_names[message.role]
        out[message_parts] = encode_parts(message.parts)
        if message.metadata is None and not message.extensions:
            return out
        return message_tail(message, out)

    def encode_message_kind(message: Message) -> Obj:
        return message_rest(
            message,
            {
                "kind": "message",
                "messageId": message.message_id,
                "role": role_names[message.role],
                "parts": encode_parts(message.parts),
            },
        )

    def encode_message_plain(message: Message) -> Obj:
        return message_rest(
            message,
            {
                "messageId": message.message_id,
                "role": role_names[message.role],
                "parts": encode_parts(message.parts),
            },
        )

    def message_rest(message: Message, out: Obj) -> Obj:
        """A message's members after its head (kind, id, role, parts)."""
        if message.context_id:
            out["contextId"] = message.context_id
        if message.task_id:
            out["taskId"] = message.task_id
        if message.metadata is None and not message.extensions and not message.reference_task_ids:
            return out
        return message_tail(message, out)

    def message_tail(message: Message, out: Obj) -> Obj:
        """The members a message seldom has (the flag is read only when one is there)."""
        if message.metadata is not None:
            out["metadata"] = free(message.metadata)
        if message.extensions:
            out["extensions"] = list(message.extensions)
        if message.reference_task_ids and reference_task_ids:
            out["referenceTaskIds"] = list(message.reference_task_ids)
        return out

    def encode_artifact_parts_first(artifact: Artifact, parts: Any = None) -> Obj:
        out: Obj = {
            "artifactId": artifact.artifact_id,
            "parts": encode_parts(artifact.parts) if parts is None else parts,
        }
        if artifact.name:
            out["name"] = artifact.name
        if artifact.description:
            out["description"] = artifact.description
        if artifact.metadata is not None:
            out["metadata"] = free(artifact.metadata)
        if artifact.extensions:
            out["extensions"] = list(artifact.extensions)
        return out

    def encode_artifact_parts_last(artifact: Artifact, parts: Any = None) -> Obj:
        out: Obj = {"artifactId": artifact.artifact_id}
        if artifact.name:
            out["name"] = artifact.name
        if artifact.description:
            out["description"] = artifact.description
        out["parts"] = encode_parts(artifact.parts) if parts is None else parts
        if artifact.metadata is not None:
            out["metadata"] = free(artifact.metadata)
        if artifact.extensions:
            out["extensions"] = list(artifact.extensions)
        return out

    encode_message = (
        encode_message_ids_first
        if ids_first
        else encode_message_kind
        if kinds
        else encode_message_plain
    )
    encode_artifact = (
        encode_artifact_parts_first if artifact_parts_first else encode_artifact_parts_last
    )

    def encode_status(status: TaskStatus) -> Obj:
        out: Obj = {"state": state_names[status.state]}
        if status.message is not None:
            out["message"] = encode_message(status.message)
        if status.timestamp is not None:
            out["timestamp"] = format_timestamp(status.timestamp)
        return out

    def encode_task_kind(task: Task, status: Any = None, history: Any = None) -> Obj:
        """`contextId` is always written (REFERENCE §4.4)."""
        head: Obj = {
            "kind": "task",
            "id": task.id,
            "contextId": task.context_id,
            "status": encode_status(task.status) if status is None else status,
        }
        return task_rest(task, head, history)

    def encode_task_plain(task: Task, status: Any = None, history: Any = None) -> Obj:
        """`contextId` is always written (REFERENCE §4.4)."""
        head: Obj = {
            "id": task.id,
            "contextId": task.context_id,
            "status": encode_status(task.status) if status is None else status,
        }
        return task_rest(task, head, history)

    def task_rest(task: Task, out: Obj, history: Any) -> Obj:
        """A lone artifact or message (the usual answer) by a plain call, more by map."""
        artifacts = task.artifacts
        if artifacts:
            out["artifacts"] = (
                [encode_artifact(artifacts[0])]
                if len(artifacts) == 1
                else list(map(encode_artifact, artifacts))
            )
        if task.history:
            if not history:
                messages = task.history
                history = (
                    [encode_message(messages[0])]
                    if len(messages) == 1
                    else list(map(encode_message, messages))
                )
            out["history"] = history
        if task.metadata is not None:
            out["metadata"] = free(task.metadata)
        return out

    # A status update: `final` derived from the state, always written (also when false);
    # 0.3 JSON-RPC (the one form with kinds) has it.
    def encode_status_event_kind(event: TaskStatusUpdateEvent, status: Any = None) -> Obj:
        head: Obj = {
            "kind": "status-update",
            "taskId": event.task_id,
            "contextId": event.context_id,
            "status": encode_status(event.status) if status is None else status,
            "final": FINAL[event.status.state],
        }
        return head if event.metadata is None else with_metadata(head, event.metadata)

    def encode_status_event_final(event: TaskStatusUpdateEvent, status: Any = None) -> Obj:
        head: Obj = {
            "taskId": event.task_id,
            "contextId": event.context_id,
            "status": encode_status(event.status) if status is None else status,
            "final": FINAL[event.status.state],
        }
        return head if event.metadata is None else with_metadata(head, event.metadata)

    def encode_status_event_plain(event: TaskStatusUpdateEvent, status: Any = None) -> Obj:
        head: Obj = {
            "taskId": event.task_id,
            "contextId": event.context_id,
            "status": encode_status(event.status) if status is None else status,
        }
        return head if event.metadata is None else with_metadata(head, event.metadata)

    def encode_artifact_event_kind(event: TaskArtifactUpdateEvent, parts: Any = None) -> Obj:
        head: Obj = {
            "kind": "artifact-update",
            "taskId": event.task_id,
            "contextId": event.context_id,
            "artifact": encode_artifact(event.artifact, parts),
        }
        return artifact_event_rest(event, head)

    def encode_artifact_event_plain(event: TaskArtifactUpdateEvent, parts: Any = None) -> Obj:
        head: Obj = {
            "taskId": event.task_id,
            "contextId": event.context_id,
            "artifact": encode_artifact(event.artifact, parts),
        }
        return artifact_event_rest(event, head)

    def artifact_event_rest(event: TaskArtifactUpdateEvent, out: Obj) -> Obj:
        if event.append:
            out["append"] = True
        if event.last_chunk:
            out["lastChunk"] = True
        if event.metadata is not None:
            out["metadata"] = free(event.metadata)
        return out

    if kinds and not final:
        raise ValueError("a form with kinds writes final (0.3 JSON-RPC)")
    status_event = (
        encode_status_event_kind
        if kinds
        else encode_status_event_final
        if final
        else encode_status_event_plain
    )
    return ContentWriters(
        encode_message,
        encode_artifact,
        encode_status,
        encode_task_kind if kinds else encode_task_plain,
        status_event,
        encode_artifact_event_kind if kinds else encode_artifact_event_plain,
    )
