"""The durable stores' row forms: model objects in the stores' own format (`row_format`),
the rows one `save` appends (derived from the folded task and its events), and a task put
back together from its rows. Shared by the SQLite and PostgreSQL backends; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec
from msgspec.structs import replace

from parley.model import (
    Artifact,
    ListTasksRequest,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskEvent,
    TaskPushNotificationConfig,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from parley.protocol import paging
from parley.protocol.errors import invalid_field
from parley.server.push.outbox import payload, traced
from parley.server.stores import row_format
from parley.server.stores.row_format import JSON, dumps, loads

__all__ = ["JSON", "dumps", "loads"]

UNTIMED = -(2**63)
"""`sort_ts` of a task without a status timestamp: below every real instant, so listed last."""


def sort_ts(task: Task) -> int:
    """The task's listing position as one integer (µs since the epoch, or UNTIMED)."""
    has_timestamp, micros, _ = paging.sort_key(task)
    return micros if has_timestamp else UNTIMED


def cursor_ts(cursor: paging.PageCursor) -> int:
    has_timestamp, micros, _ = cursor.key()
    return micros if has_timestamp else UNTIMED


def status_json(status: TaskStatus) -> str:
    return dumps(row_format.encode_status(status))


def metadata_json(metadata: object) -> str | None:
    return None if metadata is None else dumps(metadata)


def message_json(message: Message) -> str:
    return dumps(row_format.encode_message(message))


def push_config_json(config: TaskPushNotificationConfig) -> str:
    return dumps(row_format.encode_push_config(config))


def with_tenant(config: TaskPushNotificationConfig, tenant: str) -> TaskPushNotificationConfig:
    """A config as stored: it carries the tenant of the scope it was put in."""
    return replace(config, tenant=tenant)


def push_config(text: str) -> TaskPushNotificationConfig:
    return row_format.decode_push_config(loads(text))


# ----------------------------------------------------------------------------- reading


message = row_format.decode_message
status = row_format.decode_status
artifact = row_format.decode_artifact
"""An artifact from its header and its chunks' part arrays, in order."""


def task(
    task_id: str,
    context_id: str,
    *,
    status_text: str,
    metadata_text: str | None,
    history: Sequence[JSON],
    artifacts: Sequence[Artifact],
    generation: int,
) -> Task:
    """A task from its row and its (already parsed) history and artifacts."""
    return Task(
        id=task_id,
        context_id=context_id,
        status=status(loads(status_text)),
        artifacts=tuple(artifacts),
        history=tuple([message(doc) for doc in history]),
        metadata=None if metadata_text is None else loads(metadata_text),
        generation=generation,
    )


class Shape(msgspec.Struct, frozen=True):
    """What a listing loads: how much history (None: all) and whether artifacts."""

    history_length: int | None
    include_artifacts: bool


def shape_of(request: ListTasksRequest) -> Shape:
    length = request.history_length
    if length is not None and length < 0:
        raise invalid_field("historyLength", f"must be >= 0, got {length}")
    return Shape(history_length=length, include_artifacts=bool(request.include_artifacts))


def first_position(history_count: int, shape: Shape) -> int:
    """The first history position a listing returns."""
    if shape.history_length is None:
        return 0
    return max(history_count - shape.history_length, 0)


# ----------------------------------------------------------------------------- writing


class Chunk(msgspec.Struct, frozen=True):
    """Parts appended to the artifact at `position`; `replace` drops its earlier chunks."""

    position: int
    seq: int
    parts: str
    replace: bool


class Header(msgspec.Struct, frozen=True):
    """An artifact's fields but its parts, and its position in the task (artifacts are
    keyed by position: a snapshot may repeat an id, and folding targets the first)."""

    artifact_id: str
    position: int
    header: str


class Rows(msgspec.Struct):
    """What one `create` or `save` writes besides the task row."""

    messages: list[tuple[int, str]] = msgspec.field(default_factory=list)
    chunks: list[Chunk] = msgspec.field(default_factory=list)
    headers: list[Header] = msgspec.field(default_factory=list)
    events: int = 0


def created(task: Task) -> Rows:
    """The rows of a new task: all its history, each artifact as one chunk (seq 0)."""
    rows = Rows(messages=[(i, message_json(m)) for i, m in enumerate(task.history)])
    for position, item in enumerate(task.artifacts):
        header = dumps(row_format.encode_header(item))
        rows.headers.append(Header(item.artifact_id, position, header))
        rows.chunks.append(Chunk(position, 0, _parts_json(item), replace=False))
    return rows


def appended(task: Task, events: Sequence[TaskEvent], history_count: int, event_count: int) -> Rows:
    """The rows a save appends: the history past `history_count` (folding only appends to
    history) and one chunk per artifact event, numbered after `event_count`; the headers
    of the artifacts those events touched come from the folded task."""
    if len(task.history) < history_count:
        raise ValueError(f"task {task.id}: a save may not shorten the history")
    rows = Rows(
        messages=[(i, message_json(m)) for i, m in enumerate(task.history) if i >= history_count],
        events=len(events),
    )
    positions: dict[str, int] = {}
    for i, item in enumerate(task.artifacts):
        positions.setdefault(item.artifact_id, i)  # folding extends the first of an id
    touched: dict[int, None] = {}
    for seq, event in enumerate(events, start=event_count + 1):
        if not isinstance(event, TaskArtifactUpdateEvent):
            continue
        chunk = event.artifact
        position = positions.get(chunk.artifact_id)
        if position is None:
            raise ValueError(f"task {task.id}: artifact {chunk.artifact_id!r} is not in the task")
        rows.chunks.append(Chunk(position, seq, _parts_json(chunk), replace=not event.append))
        touched[position] = None
    for position in sorted(touched):
        item = task.artifacts[position]
        header = dumps(row_format.encode_header(item))
        rows.headers.append(Header(item.artifact_id, position, header))
    return rows


def _parts_json(artifact: Artifact) -> str:
    return dumps([row_format.encode_part(part) for part in artifact.parts])


def notified(
    task: Task, version: int, events: Sequence[TaskEvent] | None
) -> list[tuple[str, Task | TaskEvent]]:
    """What a write tells the task's push configs: (notification id, what it tells of): the
    task itself when it is created (`events` None), else each status and artifact update
    saved. The id (task id, version, index) is stable across retries, so a receiver can
    de-duplicate; the version is the task event's sequence number. The trace context of the
    write, if any, follows the id (`push.outbox.traced`)."""
    if events is None:
        return [(traced(f"{task.id}.{version}.0"), task)]
    if len(events) == 1:  # a runner's save: one event
        event = events[0]
        return [(traced(f"{task.id}.{version}.0"), event)] if isinstance(event, NOTIFIED) else []
    return [
        (traced(f"{task.id}.{version}.{index}"), event)
        for index, event in enumerate(events)
        if isinstance(event, NOTIFIED)
    ]


def notifications(
    task: Task, version: int, events: Sequence[TaskEvent] | None
) -> list[tuple[str, str]]:
    """`notified`, each with its payload (what a durable store records)."""
    return [(number, payload(told)) for number, told in notified(task, version, events)]


NOTIFIED = (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
"""The task events push configs are told of (a message added to history is not)."""


def utc_now() -> datetime:
    """The stores' default clock (row `created_at`/`updated_at`, retention)."""
    return datetime.now(UTC)


def micros(moment: datetime) -> int:
    """µs since the epoch (naive values read as UTC), as `sort_ts` holds it."""
    return paging.micros(moment)
