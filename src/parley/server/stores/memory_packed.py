"""Finished tasks as the memory store keeps them: packed. A terminal task no longer
changes, and a server may hold many thousands, so the store keeps it as its head (the task
without artifacts and history: what listing, recovery and purging read) and its artifacts
and history as one msgpack byte string, unpacked on read. A task that is still active
stays a model object: it changes with every event, and the runner holds it anyway.

The byte string is this process's own (never written anywhere, so it has no format number):
each object an array of its fields in declaration order, `None` for a field at its default
and trailing defaults left out; a part with text alone is that text (and parts that are
one such part, that text); a message's context and task ids, when the task's own, are left
out too (reading shares the task's strings). Packing costs a finished task ~16k
instructions once and each read of it about as many (`benchmarks`: callgrind, in process).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any

import msgspec
from msgspec.structs import replace

from parley.model import (
    Artifact,
    DataPart,
    Message,
    Part,
    RawPart,
    Role,
    Task,
    TextPart,
    UrlPart,
)
from parley.protocol import lifecycle
from parley.server.stores.base import StoredTask

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode
_ROLES = {int(role): role for role in Role}
_KINDS: tuple[type[Part], ...] = (TextPart, RawPart, UrlPart, DataPart)
_KIND = {kind: number for number, kind in enumerate(_KINDS)}
_CONTENT = ("text", "raw", "url", "data")
_UNPACKABLE = (TypeError, ValueError, OverflowError, msgspec.EncodeError)
_TERMINAL = lifecycle.TERMINAL


class PackedTask(msgspec.Struct, frozen=True, gc=False):
    """A terminal task as the memory store keeps it."""

    task: Task
    """The task without its artifacts and history."""
    version: int
    body: bytes
    """Its artifacts and history, packed."""

    def unpacked(self) -> StoredTask:
        artifacts, history = _decode(self.body)
        head = self.task
        task = replace(
            head,
            artifacts=tuple(map(_artifact, artifacts)),
            history=tuple([_message(fields, head) for fields in history]),
        )
        return StoredTask(task=task, version=self.version)


def kept(stored: StoredTask) -> StoredTask | PackedTask:
    """What the store keeps of `stored`: packed if terminal (and msgpack can hold all of
    it: a task with, say, an integer beyond 64 bits in its metadata stays as it is)."""
    task = stored.task
    if task.status.state not in _TERMINAL or not (task.artifacts or task.history):
        return stored
    try:
        history = list(map(_message_fields, task.history, repeat(task)))
        body = _encode((list(map(_artifact_fields, task.artifacts)), history))
    except _UNPACKABLE:
        return stored
    head = replace(task, artifacts=(), history=())
    return PackedTask(head, stored.version, body)


# ----------------------------------------------------------------------------- packing


def _trimmed(fields: list[Any], required: int) -> list[Any]:
    while len(fields) > required and fields[-1] is None:
        fields.pop()
    return fields


def _part_fields(part: Part) -> Any:
    kind = type(part)
    if kind is TextPart and not part.media_type and not part.filename and part.metadata is None:
        return part.text
    fields = [
        _KIND[kind],
        getattr(part, _CONTENT[_KIND[kind]]),
        part.media_type or None,
        part.filename or None,
        part.metadata,
    ]
    return _trimmed(fields, 2)


def _parts(parts: Sequence[Part]) -> Any:
    if len(parts) == 1:  # one text part with text alone (the usual): its text
        part = parts[0]
        if (
            type(part) is TextPart
            and not part.media_type
            and not part.filename
            and part.metadata is None
        ):
            return part.text
    return list(map(_part_fields, parts))


def _artifact_fields(artifact: Artifact) -> list[Any]:
    if not (artifact.name or artifact.description or artifact.extensions) and (
        artifact.metadata is None
    ):
        return [artifact.artifact_id, _parts(artifact.parts)]
    fields = [
        artifact.artifact_id,
        _parts(artifact.parts),
        artifact.name or None,
        artifact.description or None,
        artifact.metadata,
        artifact.extensions or None,
    ]
    return _trimmed(fields, 2)


def _message_fields(message: Message, task: Task) -> list[Any]:
    parts = _parts(message.parts)
    if (
        message.context_id == task.context_id
        and message.task_id == task.id
        and message.metadata is None
        and not (message.extensions or message.reference_task_ids)
    ):
        return [message.message_id, message.role, parts]
    fields = [
        message.message_id,
        message.role,
        parts,
        None if message.context_id == task.context_id else message.context_id,
        None if message.task_id == task.id else message.task_id,
        message.metadata,
        message.extensions or None,
        message.reference_task_ids or None,
    ]
    return _trimmed(fields, 3)


# ----------------------------------------------------------------------------- unpacking


def _parts_of(fields: Any) -> tuple[Part, ...]:
    if type(fields) is str:
        return (TextPart(text=fields),)
    return tuple(map(_part, fields))


def _part(fields: Any) -> Part:
    if type(fields) is str:
        return TextPart(text=fields)
    fields += [None] * (5 - len(fields))
    kind, content, media_type, filename, metadata = fields
    cls = _KINDS[kind]
    out: Part = cls(
        **{_CONTENT[kind]: content},
        media_type=media_type or "",
        filename=filename or "",
        metadata=metadata,
    )
    return out


def _artifact(fields: list[Any]) -> Artifact:
    parts = _parts_of(fields[1])
    if len(fields) == 2:
        return Artifact(artifact_id=fields[0], parts=parts)
    fields += [None] * (6 - len(fields))
    return Artifact(
        artifact_id=fields[0],
        parts=parts,
        name=fields[2] or "",
        description=fields[3] or "",
        metadata=fields[4],
        extensions=tuple(fields[5] or ()),
    )


def _message(fields: list[Any], task: Task) -> Message:
    message_id, role, parts = fields[0], _ROLES[fields[1]], _parts_of(fields[2])
    if len(fields) == 3:
        return Message(
            message_id=message_id,
            role=role,
            parts=parts,
            context_id=task.context_id,
            task_id=task.id,
        )
    fields += [None] * (8 - len(fields))
    context_id, task_id = fields[3], fields[4]
    return Message(
        message_id=message_id,
        role=role,
        parts=parts,
        context_id=task.context_id if context_id is None else context_id,
        task_id=task.id if task_id is None else task_id,
        metadata=fields[5],
        extensions=tuple(fields[6] or ()),
        reference_task_ids=tuple(fields[7] or ()),
    )
