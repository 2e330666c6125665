"""`DirectRoutes`: the direct routes the protobuf codecs share — model -> message in place
for messages, statuses, artifacts, tasks and the two update events, and the ordinary shape
of a message read back — over each proto's own part filler and reader. Where the protos
differ, the routes are told: whether the proto spells as 0.3's does (a message's parts
are `content`, a status's message is `update`, messages have no `reference_task_ids`),
and per task state the `final` flag of a status update (0.3 only). See `parley.wire.protobuf_codec`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from parley import model as m
from parley.protocol.operations import Operation
from parley.wire.limits import active
from parley.wire.protobuf import (
    Proto,
    UnusualShapeError,
    fill_struct,
    fill_timestamp,
    optional_struct,
)

K = TypeVar("K")

COMMON_MESSAGES: dict[type[m.Model], str] = {
    m.TextPart: "Part",
    m.RawPart: "Part",
    m.UrlPart: "Part",
    m.DataPart: "Part",
    m.Message: "Message",
    m.TaskStatus: "TaskStatus",
    m.Artifact: "Artifact",
    m.Task: "Task",
    m.TaskStatusUpdateEvent: "TaskStatusUpdateEvent",
    m.TaskArtifactUpdateEvent: "TaskArtifactUpdateEvent",
    m.TaskPushNotificationConfig: "TaskPushNotificationConfig",
    m.SendMessageConfiguration: "SendMessageConfiguration",
    m.AgentCard: "AgentCard",
    m.AgentInterface: "AgentInterface",
    m.AgentExtension: "AgentExtension",
    m.AgentProvider: "AgentProvider",
    m.AgentCardSignature: "AgentCardSignature",
}
"""The message of each model type whose message has the same name in both protos."""


RESULT_MESSAGES: dict[Operation, str] = {
    Operation.GET_TASK: "Task",
    Operation.CANCEL_TASK: "Task",
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: "TaskPushNotificationConfig",
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: "TaskPushNotificationConfig",
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: "Empty",
    Operation.GET_EXTENDED_AGENT_CARD: "AgentCard",
}
"""The unary results whose messages have the same name in both protos."""


def messages(pb: Any, names: Mapping[K, str]) -> dict[K, type[Proto]]:
    """Per key (a model type, an operation), the message of that name in a generated
    module `pb`."""
    return {kind: getattr(pb, name) for kind, name in names.items()}


class DirectRoutes:
    """The direct routes of one proto, given its part filler and part reader."""

    def __init__(
        self,
        fill_part: Callable[[Proto, m.Part], None],
        read_part: Callable[[Proto], m.Part],
        *,
        spelling_0_3: bool = False,
        final: Mapping[m.TaskState, bool] | None = None,
    ) -> None:
        self._fill_part = fill_part
        self._read_part = read_part
        self._0_3 = spelling_0_3  # attribute names read as constants: a name looked up is slower
        self._final = final

    def fillers(self) -> dict[type[m.Model], Callable[[Proto, Any], None]]:
        """The filler of each content type (parts, messages, statuses, artifacts, tasks,
        updates): a schema's `fillers` start from these."""
        fill_part = self._fill_part
        return {
            m.TextPart: fill_part,
            m.RawPart: fill_part,
            m.UrlPart: fill_part,
            m.DataPart: fill_part,
            m.Message: self.message,
            m.TaskStatus: self.status,
            m.Artifact: self.artifact,
            m.Task: self.task,
            m.TaskStatusUpdateEvent: self.status_event,
            m.TaskArtifactUpdateEvent: self.artifact_event,
        }

    # --- model -> message, in place

    def message(self, target: Proto, message: m.Message) -> None:
        target.message_id = message.message_id
        if message.context_id:
            target.context_id = message.context_id
        if message.task_id:
            target.task_id = message.task_id
        target.role = message.role
        parts = target.content if self._0_3 else target.parts
        fill_part = self._fill_part
        for part in message.parts:
            fill_part(parts.add(), part)
        if message.metadata is not None:
            fill_struct(target.metadata, message.metadata)
        if message.extensions:
            target.extensions.extend(message.extensions)
        if message.reference_task_ids and not self._0_3:
            target.reference_task_ids.extend(message.reference_task_ids)

    def status(self, target: Proto, status: m.TaskStatus) -> None:
        target.SetInParent()
        target.state = status.state
        if status.message is not None:
            self.message(target.update if self._0_3 else target.message, status.message)
        if status.timestamp is not None:
            fill_timestamp(target.timestamp, status.timestamp)

    def artifact(self, target: Proto, artifact: m.Artifact) -> None:
        target.SetInParent()
        target.artifact_id = artifact.artifact_id
        if artifact.name:
            target.name = artifact.name
        if artifact.description:
            target.description = artifact.description
        parts, fill_part = target.parts, self._fill_part
        for part in artifact.parts:
            fill_part(parts.add(), part)
        if artifact.metadata is not None:
            fill_struct(target.metadata, artifact.metadata)
        if artifact.extensions:
            target.extensions.extend(artifact.extensions)

    def task(self, target: Proto, task: m.Task) -> None:
        target.id = task.id
        if task.context_id:
            target.context_id = task.context_id
        self.status(target.status, task.status)
        artifacts = target.artifacts
        for artifact in task.artifacts:
            self.artifact(artifacts.add(), artifact)
        history = target.history
        for message in task.history:
            self.message(history.add(), message)
        if task.metadata is not None:
            fill_struct(target.metadata, task.metadata)

    def status_event(self, target: Proto, event: m.TaskStatusUpdateEvent) -> None:
        target.task_id = event.task_id
        target.context_id = event.context_id
        self.status(target.status, event.status)
        if self._final is not None:
            target.final = self._final[event.status.state]
        if event.metadata is not None:
            fill_struct(target.metadata, event.metadata)

    def artifact_event(self, target: Proto, event: m.TaskArtifactUpdateEvent) -> None:
        target.task_id = event.task_id
        target.context_id = event.context_id
        self.artifact(target.artifact, event.artifact)
        if event.append:
            target.append = True
        if event.last_chunk:
            target.last_chunk = True
        if event.metadata is not None:
            fill_struct(target.metadata, event.metadata)

    # --- message -> model, the ordinary shape only

    def read_message(self, message: Proto) -> m.Message:
        # Repeated fields are read by slicing (a list, at once) rather than by iterating the
        # container (one index call per item, then an IndexError), the role by a dict
        # rather than the enum's constructor: about 2 µs less a message.
        parts = (message.content if self._0_3 else message.parts)[:]
        role = _ROLES.get(message.role)
        if not message.message_id or role is None:
            raise UnusualShapeError
        if not parts or len(parts) > active().max_parts:
            raise UnusualShapeError
        extensions = message.extensions[:]
        references = () if self._0_3 else message.reference_task_ids[:]
        return m.Message(
            message_id=message.message_id,
            role=role,
            parts=tuple(map(self._read_part, parts)),
            context_id=message.context_id,
            task_id=message.task_id,
            metadata=optional_struct(message, "metadata"),
            extensions=tuple(extensions) if extensions else (),
            reference_task_ids=tuple(references) if references else (),
        )


_ROLES = {int(role): role for role in m.Role}
"""The model's role of each protobuf role number (ROLE_UNSPECIFIED is not one)."""
