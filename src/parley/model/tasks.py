"""Tasks, their status and artifacts, and the events that change them."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import TypeAlias

from parley.model._base import JSONObject, Model
from parley.model.messages import Message
from parley.model.parts import Part, TextPart


class TaskState(enum.IntEnum):
    """Every task state. Values are the protobuf enum numbers (identical in both versions).

    Which states are terminal or interrupted, and which moves are legal, is owned by
    `parley.protocol.lifecycle` alone. A state prints as the `parley` command shows it,
    `completed` or `input-required` (`str()`, f-strings); `repr` and `.name` keep the
    member's name, `int()` its number.
    """

    UNSPECIFIED = 0
    SUBMITTED = 1
    WORKING = 2
    COMPLETED = 3
    FAILED = 4
    CANCELED = 5
    INPUT_REQUIRED = 6
    REJECTED = 7
    AUTH_REQUIRED = 8

    def __str__(self) -> str:
        return self.name.lower().replace("_", "-")

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


class TaskStatus(Model, frozen=True, kw_only=True):
    """A task's state, with an optional agent message and the time of the change."""

    state: TaskState
    message: Message | None = None
    timestamp: datetime | None = None


class Artifact(Model, frozen=True, kw_only=True):
    """An output of a task."""

    artifact_id: str
    parts: tuple[Part, ...]
    name: str = ""
    description: str = ""
    metadata: JSONObject | None = None
    extensions: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The text of the artifact's text parts, run on: a streamed artifact's chunks
        are pieces of one text ("" if none)."""
        return "".join(part.text for part in self.parts if isinstance(part, TextPart))


class Task(Model, frozen=True, kw_only=True):
    """A unit of work with a lifecycle, its artifacts and its message history.

    `generation` (A2A 1.1 draft) is 1 when the task is created and grows by one with each
    status or artifact update folded into it (`protocol.folding`); 0 means not numbered
    (a peer that does not keep it). Only the 1.1 codecs put it on the wire.
    """

    id: str
    context_id: str
    status: TaskStatus
    artifacts: tuple[Artifact, ...] = ()
    history: tuple[Message, ...] = ()
    metadata: JSONObject | None = None
    generation: int = 0

    @property
    def text(self) -> str:
        """What the agent said: its artifacts' text (`Artifact.text`, one per line), or,
        with no artifact text, its status message's (an INPUT_REQUIRED task's question,
        a failed task's reason); "" if neither."""
        texts = [artifact.text for artifact in self.artifacts]
        if any(texts):
            return "\n".join(text for text in texts if text)
        return self.status.message.text if self.status.message is not None else ""


class TaskStatusUpdateEvent(Model, frozen=True, kw_only=True):
    """A change of a task's status, as streamed or pushed.

    0.3's `final` flag is not stored: the 0.3 codec derives it from the state.
    `generation`: the task's generation after this update (1.1 draft; 0: not numbered).
    """

    task_id: str
    context_id: str
    status: TaskStatus
    metadata: JSONObject | None = None
    generation: int = 0


class TaskArtifactUpdateEvent(Model, frozen=True, kw_only=True):
    """A new artifact, or a chunk of one (`append`), as streamed or pushed; `generation`
    as in TaskStatusUpdateEvent."""

    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: JSONObject | None = None
    generation: int = 0


StreamEvent: TypeAlias = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""One event of a stream (and the payload of a push notification)."""

TaskEvent: TypeAlias = TaskStatusUpdateEvent | TaskArtifactUpdateEvent | Message
"""An event that changes a stored task when folded into it."""
