"""Messages, artifacts, task status, tasks and stream events in ProtoJSON, for both
protos: one `Content` reader and writer, made once per version from its `spelling` table
(its writers are `wire.content_writers`' of that spelling).
Hot paths: direct dict access; the shared readers only when a value is missing or odd.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from parley.model import (
    Artifact,
    Message,
    SendMessageResult,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.protocol.errors import InternalError
from parley.wire.content_writers import FINAL as FINAL  # noqa: PLC0414 - the 0.3 gRPC codec reads it here
from parley.wire.content_writers import (
    ArtifactEventWriter,
    ArtifactWriter,
    ContentWriters,
    StatusEventWriter,
    TaskWriter,
    content_writers,
)
from parley.wire.json_codec import ContentReaders
from parley.wire.protojson.fields import (
    ROLE_NAMES,
    ROLES,
    moment,
    obj,
    one_of,
    present,
    required,
    role,
    state,
)
from parley.wire.protojson.parts import decode_parts
from parley.wire.protojson.spelling import SPELLING_V0_3, SPELLING_V1_0, Spelling
from parley.wire.reader import (
    Obj,
    field,
    listed,
    nested,
    opt_bool,
    opt_str,
    req_str,
    str_list,
    struct,
)


class Content:
    """Model <-> ProtoJSON content of one proto version; its methods are the codec's."""

    def __init__(self, spelling: Spelling) -> None:
        self.spelling = spelling
        writers = content_writers(
            spelling.encode_parts,
            ROLE_NAMES,
            spelling.state_names,
            message_parts=spelling.message_parts,
            ids_first=spelling.ids_first,
            reference_task_ids=spelling.reference_task_ids,
            final=spelling.final,
        )
        self.writers = writers
        self.encode_event: EventWriter = _event_writer(writers)
        self.encode_message: Callable[[Message], Obj] = writers.message
        self.encode_artifact: ArtifactWriter = writers.artifact
        self.encode_status: Callable[[TaskStatus], Obj] = writers.status
        self.encode_task: TaskWriter = writers.task
        self.encode_status_event: StatusEventWriter = writers.status_event
        self.encode_artifact_event: ArtifactEventWriter = writers.artifact_event
        self.obj: Callable[[Any], Obj] = present if spelling.null_is_required else obj
        """The value as a JSON object; null is `is required` in 0.3, `expected a JSON object`
        in 1.0."""
        self._states = spelling.states
        self._decode_part = spelling.decode_part
        self._parts_key = spelling.message_parts
        self._metadata_first = spelling.metadata_first
        self._reference_task_ids = spelling.reference_task_ids
        self._event_members = (
            ("task", None),
            ("message", spelling.message_member),
            ("statusUpdate", "status_update"),
            ("artifactUpdate", "artifact_update"),
        )
        self.readers = ContentReaders(
            self.decode_message,
            self.decode_artifact,
            self.decode_status,
            self.decode_task,
            self.decode_status_event,
            self.decode_artifact_event,
        )
        self._event_decoders: dict[str, Callable[[Any], StreamEvent]] = {
            "task": self.decode_task,
            "message": self.decode_message,
            "statusUpdate": self.decode_status_event,
            "artifactUpdate": self.decode_artifact_event,
        }

    # --- messages ------------------------------------------------------------------------------

    def decode_message(self, value: Any) -> Message:
        if type(value) is not dict:
            self.obj(value)  # raises: not an object
        d = value
        message_id = d.get("messageId")
        if type(message_id) is not str or not message_id:
            message_id = req_str(d, "messageId", "", "message_id")
        # An absent id is "" unless spelt by its proto name: read with one lookup.
        context_id = d.get("contextId", "")
        if type(context_id) is not str or (not context_id and "context_id" in d):
            context_id = opt_str(d, "contextId", "", "context_id")
        task_id = d.get("taskId", "")
        if type(task_id) is not str or (not task_id and "task_id" in d):
            task_id = opt_str(d, "taskId", "", "task_id")
        metadata = d.get("metadata")
        if metadata is not None and self._metadata_first:
            metadata = struct(d, "metadata", "")
        named = d.get("role")
        found = ROLES.get(named) if type(named) is str else None
        return Message(
            message_id=message_id,
            role=role(named) if found is None else found,
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

    def decode_artifact(self, value: Any) -> Artifact:
        if type(value) is not dict:
            self.obj(value)  # raises: not an object
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

    def decode_status(self, value: Any) -> TaskStatus:
        """The message is read under its JSON name `message`, or its proto name."""
        if type(value) is not dict:
            self.obj(value)  # raises: not an object
        message = field(value, "message", self.spelling.status_message)
        return TaskStatus(
            state=state(value.get("state"), "state", self._states),
            message=None if message is None else nested("message", self.decode_message, message),
            timestamp=None if value.get("timestamp") is None else moment(value, "timestamp"),
        )

    def decode_task(self, value: Any) -> Task:
        """An absent `contextId` is empty (ProtoJSON writers drop empty strings)."""
        if type(value) is not dict:
            self.obj(value)  # raises: not an object
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

    def decode_status_event(self, value: Any) -> TaskStatusUpdateEvent:
        """A 0.3 `final` is ignored: the model derives it from the state."""
        if type(value) is not dict:
            self.obj(value)  # raises: not an object
        d = value
        task_id, context_id = _event_ids(d)
        return TaskStatusUpdateEvent(
            task_id=task_id,
            context_id=context_id,
            status=required("status", self.decode_status, d.get("status")),
            metadata=None if d.get("metadata") is None else struct(d, "metadata", ""),
        )

    def decode_artifact_event(self, value: Any) -> TaskArtifactUpdateEvent:
        if type(value) is not dict:
            self.obj(value)  # raises: not an object
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

    def decode_event(self, value: Any) -> StreamEvent:
        """A `StreamResponse`: exactly one of task, message, statusUpdate, artifactUpdate."""
        if type(value) is not dict:
            self.obj(value)  # raises: not an object
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
            encode_task = self.encode_task
            return {"task": encode_task(result)}
        if type(result) is Message:
            encode_message = self.encode_message
            return {"message": encode_message(result)}
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


class EventWriter(Protocol):
    def __call__(
        self, event: StreamEvent, status: Any = None, history: Any = None, parts: Any = None
    ) -> Obj: ...


def _event_writer(writers: ContentWriters) -> EventWriter:
    """A `StreamResponse` writer: the event under its oneof member name. `status` (a task's
    or a status update's), `history` (a task's), `parts` (an artifact update's): their
    encodings, if already made (e.g. `wire.json_bytes.fragment`s of stored rows), put in.
    A closure over the writers: no attribute is looked up per call."""
    encode_status_event, encode_artifact_event = writers.status_event, writers.artifact_event
    encode_task, encode_message = writers.task, writers.message

    def encode_event(
        event: StreamEvent, status: Any = None, history: Any = None, parts: Any = None
    ) -> Obj:
        if type(event) is TaskStatusUpdateEvent:
            return {"statusUpdate": encode_status_event(event, status)}
        if type(event) is TaskArtifactUpdateEvent:
            return {"artifactUpdate": encode_artifact_event(event, parts)}
        if type(event) is Task:
            return {"task": encode_task(event, status, history)}
        if type(event) is Message:
            return {"message": encode_message(event)}
        raise InternalError(f"Not a stream event: {type(event).__name__}")

    return encode_event


V1_0 = Content(SPELLING_V1_0)
"""The 1.0 proto's content."""

V0_3 = Content(SPELLING_V0_3)
"""The 0.3 proto's content."""
