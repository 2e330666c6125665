"""Finished tasks as the memory store keeps them: packed. A terminal task no longer
changes, and a server may hold many thousands, so the store keeps it as its head (the task
without artifacts and history: what listing, recovery and purging read) and its artifacts
and history as one msgpack byte string, unpacked on read. A task that is still active
stays a model object: it changes with every event, and the runner holds it anyway.

The byte string is this process's own (never written anywhere, so it has no format number):
each object an array of its fields in declaration order, `None` for a field at its default
and trailing defaults left out; a part with text alone is that text (and parts that are
one such part, that text); a message's context and task ids, when the task's own, are left
out too (reading shares the task's strings). Packing costs an echo task ~10k instructions
once and each read of it ~17k (callgrind, in process).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
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
from parley.server.stores.base import StoredTask

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode
_ROLES = {int(role): role for role in Role}
_KINDS: tuple[type[Part], ...] = (TextPart, RawPart, UrlPart, DataPart)
_KIND = {kind: number for number, kind in enumerate(_KINDS)}
_CONTENT = ("text", "raw", "url", "data")
_UNPACKABLE = (TypeError, ValueError, OverflowError, msgspec.EncodeError)


class PackedTask(msgspec.Struct, frozen=True, gc=False):
    """A terminal task as the memory store keeps it, with when it was saved finished."""

    task: Task
    """The task without its artifacts and history (the whole task when `body` is None)."""
    version: int
    body: bytes | None
    """Its artifacts and history, packed; None if it has neither, or msgpack cannot hold
    them (the task is then kept whole)."""
    finished: datetime
    """When the store saved it finished (what `purge` compares)."""

    def unpacked(self) -> StoredTask:
        head, body = self.task, self.body
        if body is None:
            return StoredTask(head, self.version)
        artifacts, history = _decode(body)
        task = replace(
            head,
            artifacts=tuple(map(_artifact, artifacts)),
            history=tuple([_message(fields, head) for fields in history]),
        )
        return StoredTask(task, self.version)


def packed(task: Task, version: int, finished: datetime) -> PackedTask:
    """A terminal task as the store keeps it: packed if msgpack can hold all of it (a
    task with, say, an integer beyond 64 bits in its metadata is kept whole)."""
    artifacts, history = task.artifacts, task.history
    if not (artifacts or history):
        return PackedTask(task, version, None, finished)
    try:
        body = _encode((_artifacts_fields(artifacts), _history_fields(history, task)))
    except _UNPACKABLE:
        return PackedTask(task, version, None, finished)
    return PackedTask(replace(task, artifacts=(), history=()), version, body, finished)


# ----------------------------------------------------------------------------- packing


def _trimmed(fields: list[Any], required: int) -> list[Any]:
    while len(fields) > required and fields[-1] is None:
        fields.pop()
    return fields


def _part_fields(part: Part) -> Any:
    kind = type(part)
    if kind is TextPart and not (part.media_type or part.filename) and part.metadata is None:
        return part.text
    number = _KIND[kind]
    fields = [
        number,
        getattr(part, _CONTENT[number]),
        part.media_type or None,
        part.filename or None,
        part.metadata,
    ]
    return _trimmed(fields, 2)


def _content(parts: Sequence[Part]) -> Any:
    """Parts packed: one text part with text alone (the usual) as its text."""
    if (
        len(parts) == 1
        and type(part := parts[0]) is TextPart
        and not (part.media_type or part.filename)
        and part.metadata is None
    ):
        return part.text
    return list(map(_part_fields, parts))


def _artifacts_fields(artifacts: Sequence[Artifact]) -> list[Any]:
    out: list[Any] = []
    for artifact in artifacts:
        content = _content(artifact.parts)
        if (
            artifact.name or artifact.description or artifact.extensions
        ) or artifact.metadata is not None:
            fields = [
                artifact.artifact_id,
                content,
                artifact.name or None,
                artifact.description or None,
                artifact.metadata,
                artifact.extensions or None,
            ]
            out.append(_trimmed(fields, 2))
        else:
            out.append((artifact.artifact_id, content))
    return out


def _history_fields(history: Sequence[Message], task: Task) -> list[Any]:
    out: list[Any] = []
    context_id, task_id = task.context_id, task.id
    for message in history:
        content = _content(message.parts)
        if (
            message.context_id == context_id
            and message.task_id == task_id
            and message.metadata is None
            and not (message.extensions or message.reference_task_ids)
        ):
            out.append((message.message_id, message.role, content))
        else:
            fields = [
                message.message_id,
                message.role,
                content,
                None if message.context_id == context_id else message.context_id,
                None if message.task_id == task_id else message.task_id,
                message.metadata,
                message.extensions or None,
                message.reference_task_ids or None,
            ]
            out.append(_trimmed(fields, 3))
    return out


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
