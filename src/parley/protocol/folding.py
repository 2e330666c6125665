"""Folding events into a task: status updates, artifact chunks and messages -> the new Task.

Folding also keeps the task's `generation` (A2A 1.1 draft): 1 for a new task, one more
for each status or artifact update; a message into history leaves it (it is no event of
the task's stream). The update that produced a generation is published with it as its
sequence number; `generations.numbered` writes it into the event where a wire shows it.

Pure functions over frozen model objects; legality of state moves is `lifecycle`'s. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from msgspec.structs import replace

from parley.model import (
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol import lifecycle
from parley.protocol.errors import (
    InvalidAgentResponseError,
    UnsupportedOperationError,
    invalid_field,
)


def new_task(
    message: Message, *, task_id: str, context_id: str, timestamp: datetime | None = None
) -> Task:
    """A SUBMITTED task whose history is the initiating message (ids filled in)."""
    if not task_id:
        raise invalid_field("taskId", "a new task needs a non-empty id")
    if not context_id:
        raise invalid_field("contextId", "a new task needs a non-empty context id")
    if message.task_id and message.task_id != task_id:
        raise invalid_field("message.taskId", "does not match the new task's id")
    if message.context_id and message.context_id != context_id:
        raise invalid_field("message.contextId", "does not match the new task's context id")
    first = replace(message, task_id=task_id, context_id=context_id)
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=timestamp),
        history=(first,),
        generation=1,
    )


def failure(
    task: Task, text: str, message_id: str, timestamp: datetime | None = None
) -> TaskStatusUpdateEvent:
    """The update that fails `task`, its status message saying why (`text`)."""
    note = Message(
        message_id=message_id,
        role=Role.AGENT,
        parts=(TextPart(text=text),),
        task_id=task.id,
        context_id=task.context_id,
    )
    status = TaskStatus(state=TaskState.FAILED, message=note, timestamp=timestamp)
    return TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=status)


def stamp(
    event: TaskEvent, task_id: str, context_id: str, now: Callable[[], datetime]
) -> TaskEvent:
    """`event` with the ids an agent may leave empty filled in, and a status time."""
    if isinstance(event, TaskArtifactUpdateEvent):
        if event.task_id and event.context_id:
            return event
        return replace(
            event, task_id=event.task_id or task_id, context_id=event.context_id or context_id
        )
    if isinstance(event, TaskStatusUpdateEvent):
        status = event.status
        if status.timestamp is None:
            status = replace(status, timestamp=now())
        if event.task_id and event.context_id:  # (an agent function's: its ids filled in)
            return event if status is event.status else replace(event, status=status)
        return replace(
            event,
            task_id=event.task_id or task_id,
            context_id=event.context_id or context_id,
            status=status,
        )
    return event


def apply_event(task: Task, event: TaskEvent) -> Task:
    """The task after `event`; raise an A2AError if the event does not fit the task.

    * status update: the state moves through `lifecycle.transition` (illegal moves raise
      InvalidAgentResponseError); the previous status message goes to history;
      event metadata is merged into the task's metadata;
    * artifact update: added, replaced (same id, `append` false) or extended (`append`);
    * message: the current status message, then the message, go to history.

    Events of another task or context raise InvalidParamsError.
    """
    if type(event) is TaskArtifactUpdateEvent:  # first: a stream's usual event, inline
        if (event.task_id and event.task_id != task.id) or (
            event.context_id and event.context_id != task.context_id
        ):
            _check_owner(task, event.task_id, event.context_id, "")
        if task.status.state in lifecycle.TERMINAL:
            _check_not_terminal(task, "an artifact update")
        return replace(
            task, artifacts=_fold_artifact(task.artifacts, event), generation=task.generation + 1
        )
    if isinstance(event, TaskArtifactUpdateEvent):  # a subclass: the checks as calls
        _check_owner(task, event.task_id, event.context_id, "")
        _check_not_terminal(task, "an artifact update")
        return replace(
            task, artifacts=_fold_artifact(task.artifacts, event), generation=task.generation + 1
        )
    if isinstance(event, TaskStatusUpdateEvent):
        if (event.task_id and event.task_id != task.id) or (
            event.context_id and event.context_id != task.context_id
        ):
            _check_owner(task, event.task_id, event.context_id, "")
        return _apply_status(task, event)
    return _apply_message(task, event)


def _check_owner(task: Task, task_id: str, context_id: str, prefix: str) -> None:
    """Reject an event naming another task or context (empty ids belong to any task)."""
    if task_id and task_id != task.id:
        raise invalid_field(
            f"{prefix}taskId", f"event for task {task_id!r} folded into task {task.id!r}"
        )
    if context_id and context_id != task.context_id:
        raise invalid_field(
            f"{prefix}contextId",
            f"context {context_id!r} does not match the task's context {task.context_id!r}",
        )


def _check_not_terminal(task: Task, what: str) -> None:
    if lifecycle.is_terminal(task.status.state):
        raise InvalidAgentResponseError(
            f"Task {task.id} is {task.status.state.name}: {what} cannot change it",
            metadata={"taskId": task.id, "state": task.status.state.name},
        )


def _append_once(history: tuple[Message, ...], message: Message) -> tuple[Message, ...]:
    """`history` plus `message`, unless it already ends with that message id."""
    if history and history[-1].message_id == message.message_id:
        return history
    return (*history, message)


def _apply_status(task: Task, event: TaskStatusUpdateEvent) -> Task:
    if event.status.state not in lifecycle.TRANSITIONS[task.status.state]:
        lifecycle.transition(task.status.state, event.status.state)  # raises
    history = task.history
    if task.status.message is not None:
        history = _append_once(history, task.status.message)
    metadata = task.metadata
    if event.metadata:
        metadata = {**(task.metadata or {}), **event.metadata}
    return replace(
        task,
        status=event.status,
        history=history,
        metadata=metadata,
        generation=task.generation + 1,
    )


def _apply_message(task: Task, message: Message) -> Task:
    _check_owner(task, message.task_id, message.context_id, "message.")
    if lifecycle.is_terminal(task.status.state):
        if message.role is Role.USER:
            raise UnsupportedOperationError(
                f"Task {task.id} is {task.status.state.name} and accepts no further messages",
                metadata={"taskId": task.id, "state": task.status.state.name},
            )
        _check_not_terminal(task, "a message")
    history = task.history
    status = task.status
    if status.message is not None:
        history = _append_once(history, status.message)
        status = replace(status, message=None)
    filled = replace(message, task_id=task.id, context_id=task.context_id)
    return replace(task, status=status, history=_append_once(history, filled))


def _fold_artifact(
    artifacts: tuple[Artifact, ...], event: TaskArtifactUpdateEvent
) -> tuple[Artifact, ...]:
    """Add, replace or extend the artifact with the event's artifact id."""
    chunk = event.artifact
    if artifacts and artifacts[-1].artifact_id == chunk.artifact_id:  # the usual chunk
        merged = _extend(artifacts[-1], chunk) if event.append else chunk
        return (*artifacts[:-1], merged)
    index = next((i for i, a in enumerate(artifacts) if a.artifact_id == chunk.artifact_id), None)
    if index is None:
        return (*artifacts, chunk)
    merged = _extend(artifacts[index], chunk) if event.append else chunk
    return (*artifacts[:index], merged, *artifacts[index + 1 :])


def _extend(existing: Artifact, chunk: Artifact) -> Artifact:
    """`existing` with the chunk's parts appended; non-empty chunk fields override."""
    if not (chunk.name or chunk.description or chunk.metadata or chunk.extensions):
        return replace(existing, parts=existing.parts + chunk.parts)  # a streamed chunk
    return replace(
        existing,
        parts=existing.parts + chunk.parts,
        name=chunk.name or existing.name,
        description=chunk.description or existing.description,
        metadata=chunk.metadata if chunk.metadata else existing.metadata,
        extensions=chunk.extensions or existing.extensions,
    )
