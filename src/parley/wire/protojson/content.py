"""Messages, artifacts, task status, tasks and stream events in ProtoJSON, for both
protos: one `Content` reader and writer, made once per version from its `spelling` table.
Hot paths: direct dict access; the shared readers only when a value is missing or odd.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from parley.model import (
    Artifact,
    Message,
    SendMessageResult,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import InternalError
from parley.protocol.lifecycle import ends_stream
from parley.wire.protojson.fields import (
    ROLE_NAMES,
    free,
    moment,
    one_of,
    required,
    role,
    state,
)
from parley.wire.protojson.parts import decode_parts
from parley.wire.protojson.spelling import SPELLING_V0_3, SPELLING_V1_0, Spelling
from parley.wire.reader import (
    Obj,
    fail,
    field,
    format_timestamp,
    listed,
    nested,
    opt_bool,
    opt_str,
    req_str,
    str_list,
    struct,
)

FINAL = {state: ends_stream(state) for state in TaskState}
"""The 0.3 proto's `final` flag of a status update per state: true when it ends a stream."""


class Content:
    """Model <-> ProtoJSON content of one proto version; its methods are the codec's."""

    def __init__(self, spelling: Spelling) -> None:
        self.spelling = spelling
        self._state_names = spelling.state_names
        self._states = spelling.states
        self._encode_parts = spelling.encode_parts
        self._decode_part = spelling.decode_part
        self._parts_key = spelling.message_parts
        self._metadata_first = spelling.metadata_first
        self._ids_first = spelling.ids_first
        self._reference_task_ids = spelling.reference_task_ids
        self._event_members = (
            ("task", None),
            ("message", spelling.message_member),
            ("statusUpdate", "status_update"),
            ("artifactUpdate", "artifact_update"),
        )
        self._event_decoders: dict[str, Callable[[Any], StreamEvent]] = {
            "task": self.decode_task,
            "message": self.decode_message,
            "statusUpdate": self.decode_status_event,
            "artifactUpdate": self.decode_artifact_event,
        }

    def _refuse(self, value: Any) -> NoReturn:
        """A value that is not a JSON object, where one is expected."""
        missing = value is None and self.spelling.null_is_required
        fail("", "", "is required" if missing else "expected a JSON object")

    def obj(self, value: Any) -> Obj:
        if type(value) is not dict:
            self._refuse(value)
        return value

    # --- messages ------------------------------------------------------------------------------

    def encode_message(self, message: Message) -> Obj:
        encode_parts = self._encode_parts  # a load, then a call: faster than a method-style call
        if self._ids_first:  # 0.3's order of members
            out: Obj = {"messageId": message.message_id}
            if message.context_id:
                out["contextId"] = message.context_id
            if message.task_id:
                out["taskId"] = message.task_id
            out["role"] = ROLE_NAMES[message.role]
            out[self._parts_key] = encode_parts(message.parts)
        else:
            out = {
                "messageId": message.message_id,
                "role": ROLE_NAMES[message.role],
                "parts": encode_parts(message.parts),
            }
            if message.context_id:
                out["contextId"] = message.context_id
            if message.task_id:
                out["taskId"] = message.task_id
        if message.metadata is not None:
            out["metadata"] = free(message.metadata)
        if message.extensions:
            out["extensions"] = list(message.extensions)
        if message.reference_task_ids and self._reference_task_ids:
            out["referenceTaskIds"] = list(message.reference_task_ids)
        return out

    def decode_message(self, value: Any) -> Message:
        if type(value) is not dict:
            self._refuse(value)
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
        if metadata is not None and self._metadata_first:
            metadata = struct(d, "metadata", "")
        return Message(
            message_id=message_id,
            role=role(d.get("role")),
            parts=decode_parts(d, self._parts_key, self._decode_part),
            context_id=context_id,
            task_id=task_id,
            metadata=metadata
            if metadata is None or self._metadata_first
            else struct(d, "metadata", ""),
            extensions=str_list(d, "extensions", "") if "extensions" in d else (),
            reference_task_ids=(
                str_list(d, "referenceTaskIds", "", "reference_task_ids")
                if self._reference_task_ids
                and ("referenceTaskIds" in d or "reference_task_ids" in d)
                else ()
            ),
        )

    # --- artifacts, status, tasks --------------------------------------------------------------

    def encode_artifact(self, artifact: Artifact, parts: Any = None) -> Obj:
        out: Obj = {"artifactId": artifact.artifact_id}
        if artifact.name:
            out["name"] = artifact.name
        if artifact.description:
            out["description"] = artifact.description
        encode_parts = self._encode_parts
        out["parts"] = encode_parts(artifact.parts) if parts is None else parts
        if artifact.metadata is not None:
            out["metadata"] = free(artifact.metadata)
        if artifact.extensions:
            out["extensions"] = list(artifact.extensions)
        return out

    def decode_artifact(self, value: Any) -> Artifact:
        if type(value) is not dict:
            self._refuse(value)
        d = value
        artifact_id = d.get("artifactId")
        if type(artifact_id) is not str or not artifact_id:
            artifact_id = req_str(d, "artifactId", "", "artifact_id")
        parts = () if self._metadata_first else decode_parts(d, "parts", self._decode_part)
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
            parts=parts or decode_parts(d, "parts", self._decode_part),
            name=name,
            description=description,
            metadata=metadata,
            extensions=str_list(d, "extensions", "") if "extensions" in d else (),
        )

    def encode_status(self, status: TaskStatus) -> Obj:
        out: Obj = {"state": self._state_names[status.state]}
        if status.message is not None:
            out["message"] = self.encode_message(status.message)
        if status.timestamp is not None:
            out["timestamp"] = format_timestamp(status.timestamp)
        return out

    def decode_status(self, value: Any) -> TaskStatus:
        """The message is read under its JSON name `message`, or its proto name."""
        if type(value) is not dict:
            self._refuse(value)
        message = field(value, "message", self.spelling.status_message)
        return TaskStatus(
            state=state(value.get("state"), "state", self._states),
            message=None if message is None else nested("message", self.decode_message, message),
            timestamp=None if value.get("timestamp") is None else moment(value, "timestamp"),
        )

    def encode_task(self, task: Task, status: Any = None, history: Any = None) -> Obj:
        """A Task; `contextId` is always written (REFERENCE §4.4). `status` and `history`:
        their encodings, if already made, put in as they are."""
        out: Obj = {
            "id": task.id,
            "contextId": task.context_id,
            "status": self.encode_status(task.status) if status is None else status,
        }
        if task.artifacts:
            out["artifacts"] = [self.encode_artifact(artifact) for artifact in task.artifacts]
        if task.history:
            out["history"] = history or [self.encode_message(message) for message in task.history]
        if task.metadata is not None:
            out["metadata"] = free(task.metadata)
        return out

    def decode_task(self, value: Any) -> Task:
        """An absent `contextId` is empty (ProtoJSON writers drop empty strings)."""
        if type(value) is not dict:
            self._refuse(value)
        d = value
        task_id = d.get("id")
        if type(task_id) is not str or not task_id:
            task_id = req_str(d, "id", "")
        context_id = d.get("contextId")
        if type(context_id) is not str:
            context_id = opt_str(d, "contextId", "", "context_id")
        metadata = d.get("metadata")
        if metadata is not None and self._metadata_first:
            metadata = struct(d, "metadata", "")
        return Task(
            id=task_id,
            context_id=context_id,
            status=required("status", self.decode_status, d.get("status")),
            artifacts=listed("artifacts", self.decode_artifact, d.get("artifacts")),
            history=listed("history", self.decode_message, d.get("history")),
            metadata=metadata
            if metadata is None or self._metadata_first
            else struct(d, "metadata", ""),
        )

    # --- stream events -------------------------------------------------------------------------

    def encode_status_event(self, event: TaskStatusUpdateEvent, status: Any = None) -> Obj:
        out: Obj = {
            "taskId": event.task_id,
            "contextId": event.context_id,
            "status": self.encode_status(event.status) if status is None else status,
        }
        if self.spelling.final:  # derived from the state, always written (also when false)
            out["final"] = FINAL[event.status.state]
        if event.metadata is not None:
            out["metadata"] = free(event.metadata)
        return out

    def decode_status_event(self, value: Any) -> TaskStatusUpdateEvent:
        """A 0.3 `final` is ignored: the model derives it from the state."""
        if type(value) is not dict:
            self._refuse(value)
        d = value
        task_id, context_id = _event_ids(d)
        return TaskStatusUpdateEvent(
            task_id=task_id,
            context_id=context_id,
            status=required("status", self.decode_status, d.get("status")),
            metadata=None if d.get("metadata") is None else struct(d, "metadata", ""),
        )

    def encode_artifact_event(self, event: TaskArtifactUpdateEvent, parts: Any = None) -> Obj:
        out: Obj = {
            "taskId": event.task_id,
            "contextId": event.context_id,
            "artifact": self.encode_artifact(event.artifact, parts),
        }
        if event.append:
            out["append"] = True
        if event.last_chunk:
            out["lastChunk"] = True
        if event.metadata is not None:
            out["metadata"] = free(event.metadata)
        return out

    def decode_artifact_event(self, value: Any) -> TaskArtifactUpdateEvent:
        if type(value) is not dict:
            self._refuse(value)
        d = value
        task_id, context_id = _event_ids(d)
        append = d.get("append")
        last_chunk = d.get("lastChunk")
        return TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id=context_id,
            artifact=required("artifact", self.decode_artifact, d.get("artifact")),
            append=append if type(append) is bool else bool(opt_bool(d, "append", "")),
            last_chunk=(
                last_chunk
                if type(last_chunk) is bool
                else bool(opt_bool(d, "lastChunk", "", "last_chunk"))
            ),
            metadata=None if d.get("metadata") is None else struct(d, "metadata", ""),
        )

    def encode_event(
        self, event: StreamEvent, status: Any = None, history: Any = None, parts: Any = None
    ) -> Obj:
        """A `StreamResponse`: the event under its oneof member name. `status` (a task's or
        a status update's), `history` (a task's), `parts` (an artifact update's): their
        encodings, if already made (e.g. `wire.json.fragment`s of stored rows), put in."""
        if type(event) is TaskStatusUpdateEvent:
            return {"statusUpdate": self.encode_status_event(event, status)}
        if type(event) is TaskArtifactUpdateEvent:
            return {"artifactUpdate": self.encode_artifact_event(event, parts)}
        if type(event) is Task:
            return {"task": self.encode_task(event, status, history)}
        if type(event) is Message:
            return {"message": self.encode_message(event)}
        raise InternalError(f"Not a stream event: {type(event).__name__}")

    def decode_event(self, value: Any) -> StreamEvent:
        """A `StreamResponse`: exactly one of task, message, statusUpdate, artifactUpdate."""
        if type(value) is not dict:
            self._refuse(value)
        if len(value) == 1:  # the usual shape: one camelCase member
            ((key, inner),) = value.items()
            decoder = self._event_decoders.get(key)
            if decoder is not None and inner is not None:
                event: StreamEvent = nested(key, decoder, inner)
                return event
        key, inner = one_of(value, self._event_members)
        event = nested(key, self._event_decoders[key], inner)
        return event

    def encode_send_result(self, result: SendMessageResult) -> Obj:
        """A `SendMessageResponse`: `{"task": ...}` or `{"message": ...}`."""
        if type(result) is Task:
            return {"task": self.encode_task(result)}
        if type(result) is Message:
            return {"message": self.encode_message(result)}
        raise InternalError(f"SendMessage returns a Task or a Message, not {type(result).__name__}")

    def decode_send_result(self, value: Any) -> SendMessageResult:
        key, inner = one_of(self.obj(value), self._event_members[:2])
        if key == "task":
            return nested(key, self.decode_task, inner)
        return nested(key, self.decode_message, inner)


def _event_ids(d: Obj) -> tuple[str, str]:
    task_id = d.get("taskId")
    if type(task_id) is not str or not task_id:
        task_id = req_str(d, "taskId", "", "task_id")
    context_id = d.get("contextId")
    if type(context_id) is not str or not context_id:
        context_id = req_str(d, "contextId", "", "context_id")
    return task_id, context_id


V1_0 = Content(SPELLING_V1_0)
"""The 1.0 proto's content."""

V0_3 = Content(SPELLING_V0_3)
"""The 0.3 proto's content."""
