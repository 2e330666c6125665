"""The durable stores' row forms: model objects as 1.0 wire JSON (stable and versioned), the
rows one `save` appends (derived from the folded task and its events), and a task put back
together from its rows. Shared by the SQLite and PostgreSQL backends; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

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
from parley.server.push.outbox import traced
from parley.wire import json as wire_json
from parley.wire.limits import Limits
from parley.wire.v1_0 import content
from parley.wire.v1_0.json import CODEC

JSON = Any
"""A parsed JSON value read back from the database."""

UNTIMED = -(2**63)
"""`sort_ts` of a task without a status timestamp: below every real instant, so listed last."""

_PLACEHOLDER_PART = {"text": ""}
_NO_SIZE_LIMIT = Limits(max_body_bytes=2**62)
"""Stored rows were checked when they arrived; reading them back is not bounded again."""


def dumps(value: JSON) -> str:
    return wire_json.dumps(value).decode("utf-8")


def loads(text: str | bytes) -> JSON:
    return wire_json.loads(text, _NO_SIZE_LIMIT)


def sort_ts(task: Task) -> int:
    """The task's listing position as one integer (µs since the epoch, or UNTIMED)."""
    has_timestamp, micros, _ = paging.sort_key(task)
    return micros if has_timestamp else UNTIMED


def cursor_ts(cursor: paging.PageCursor) -> int:
    has_timestamp, micros, _ = cursor.key()
    return micros if has_timestamp else UNTIMED


def status_json(status: TaskStatus) -> str:
    return dumps(CODEC.encode(status))


def metadata_json(metadata: object) -> str | None:
    return None if metadata is None else dumps(metadata)


def message_json(message: Message) -> str:
    return dumps(CODEC.encode(message))


def artifact_json(artifact: Artifact) -> tuple[str, str]:
    """An artifact as (header without parts, parts array)."""
    header = CODEC.encode(artifact)
    parts = header.pop("parts", [])
    return dumps(header), dumps(parts)


def push_config_json(config: TaskPushNotificationConfig) -> str:
    return dumps(CODEC.encode(config))


def with_tenant(config: TaskPushNotificationConfig, tenant: str) -> TaskPushNotificationConfig:
    """A config as stored: it carries the tenant of the scope it was put in."""
    return replace(config, tenant=tenant)


def push_config(text: str) -> TaskPushNotificationConfig:
    return CODEC.decode(TaskPushNotificationConfig, loads(text))


# ----------------------------------------------------------------------------- reading


def _lenient(kind: type[Message] | type[Artifact], doc: JSON, id_key: str) -> Any:
    """Decode a stored message or artifact; the codec refuses an empty id or no parts
    (a peer must send them), but the model, and so a stored task, may hold them."""
    no_id, no_parts = not doc.get(id_key), not doc.get("parts")
    if no_id or no_parts:
        doc = {
            **doc,
            id_key: doc.get(id_key) or "-",
            "parts": doc.get("parts") or [_PLACEHOLDER_PART],
        }
    value = CODEC.decode(kind, doc)
    if no_id:
        value = replace(value, **{"message_id" if kind is Message else "artifact_id": ""})
    return replace(value, parts=()) if no_parts else value


def message(doc: JSON) -> Message:
    result: Message = _lenient(Message, doc, "messageId")
    return result


def status(doc: JSON) -> TaskStatus:
    note = doc.get("message")
    if note is None:
        return CODEC.decode(TaskStatus, doc)
    bare = CODEC.decode(TaskStatus, {key: value for key, value in doc.items() if key != "message"})
    return replace(bare, message=message(note))


def artifact(header: JSON, chunks: Sequence[JSON]) -> Artifact:
    """An artifact from its header and its chunks' part arrays, in order."""
    parts = [part for chunk in chunks for part in chunk]
    result: Artifact = _lenient(Artifact, {**header, "parts": parts}, "artifactId")
    return result


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
        history=tuple(message(doc) for doc in history),
        metadata=None if metadata_text is None else loads(metadata_text),
        generation=generation,
    )


@dataclass(frozen=True, slots=True)
class Shape:
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


@dataclass(frozen=True, slots=True)
class Chunk:
    """Parts appended to the artifact at `position`; `replace` drops its earlier chunks."""

    position: int
    seq: int
    parts: str
    replace: bool


@dataclass(frozen=True, slots=True)
class Header:
    """An artifact's fields but its parts, and its position in the task (artifacts are
    keyed by position: a snapshot may repeat an id, and folding targets the first)."""

    artifact_id: str
    position: int
    header: str


@dataclass(slots=True)
class Rows:
    """What one `create` or `save` writes besides the task row."""

    messages: list[tuple[int, str]] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    headers: list[Header] = field(default_factory=list)
    events: int = 0


def created(task: Task) -> Rows:
    """The rows of a new task: all its history, each artifact as one chunk (seq 0)."""
    rows = Rows(messages=[(i, message_json(m)) for i, m in enumerate(task.history)])
    for position, item in enumerate(task.artifacts):
        header, parts = artifact_json(item)
        rows.headers.append(Header(item.artifact_id, position, header))
        rows.chunks.append(Chunk(position, 0, parts, replace=False))
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
        parts = dumps([CODEC.encode(part) for part in chunk.parts])
        rows.chunks.append(Chunk(position, seq, parts, replace=not event.append))
        touched[position] = None
    for position in sorted(touched):
        item = task.artifacts[position]
        header, _ = artifact_json(replace(item, parts=()))
        rows.headers.append(Header(item.artifact_id, position, header))
    return rows


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


def payload(told: Task | TaskEvent) -> str:
    """A notification's body: the A2A 1.0 StreamResponse JSON of a task or event."""
    return dumps(CODEC.encode_event(told))


def notifications(
    task: Task,
    version: int,
    events: Sequence[TaskEvent] | None,
    status: str | None = None,
    changes: Rows | None = None,
) -> list[tuple[str, str]]:
    """`notified`, each with its payload (what a durable store records). The JSON the write
    made for its rows, `status` (of `task.status`) and `changes` (`created` or `appended`),
    goes into the payloads as it is, not encoded again: a new task's status and history, the
    status of an update to it, an artifact update's parts."""
    found = notified(task, version, events)
    if status is None or changes is None:
        return [(number, payload(told)) for number, told in found]
    made = wire_json.fragment(status)
    if events is None:
        history = None
        if len(changes.messages) == len(task.history):
            history = [wire_json.fragment(body) for _, body in changes.messages]
        return [(found[0][0], dumps(content.encode_event(task, made, history)))]
    chunks = iter(changes.chunks)  # one per artifact update, in order
    reused: list[tuple[str, str]] = []
    for number, told in found:
        if type(told) is TaskArtifactUpdateEvent:
            parts = wire_json.fragment(next(chunks).parts)
            reused.append((number, dumps(content.encode_event(told, parts=parts))))
        elif type(told) is TaskStatusUpdateEvent and told.status is task.status:
            reused.append((number, dumps(content.encode_event(told, made))))
        else:
            reused.append((number, payload(told)))
    return reused


NOTIFIED = (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
"""The task events push configs are told of (a message added to history is not)."""


def utc_now() -> datetime:
    """The stores' default clock (row `created_at`/`updated_at`, retention)."""
    return datetime.now(UTC)


def micros(moment: datetime) -> int:
    """µs since the epoch (naive values read as UTC), as `sort_ts` holds it."""
    return paging.micros(moment)
