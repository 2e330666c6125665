"""The wire bytes of a 1.0 `StreamResponse` carrying a `TaskArtifactUpdateEvent` with one
plain text part, written directly: the event a streaming agent sends most (one per chunk),
2.4x faster than building the protobuf message and serializing it.

Written in field-number order with proto3's rules (empty strings and false booleans left
out; the part's `text` always written, being a oneof member), which is also the order the
protobuf runtime serializes in: the bytes are the runtime's, byte for byte (tested). Any
other event — several parts, a part other than plain text, a name, description, extension
or metadata — returns None, and the codec builds the message.
"""

from __future__ import annotations

from parley import model as m

_SMALL = tuple(bytes((n,)) for n in range(0x80))


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def artifact_update(event: m.TaskArtifactUpdateEvent) -> bytes | None:
    """`StreamResponse{artifact_update: event}` serialized, or None (not covered)."""
    artifact = event.artifact
    parts = artifact.parts
    if (
        len(parts) != 1
        or event.metadata is not None
        or artifact.metadata is not None
        or artifact.name
        or artifact.description
        or artifact.extensions
    ):
        return None
    part = parts[0]
    if type(part) is not m.TextPart or part.metadata is not None or part.filename:
        return None
    if part.media_type:
        return None
    varint = _varint
    text = part.text.encode()
    part_bytes = b"\x0a" + varint(len(text)) + text  # Part.text = 1 (a oneof: always)
    artifact_id = artifact.artifact_id.encode()
    artifact_bytes = (
        (b"\x0a" + varint(len(artifact_id)) + artifact_id if artifact_id else b"")  # 1
        + b"\x22"  # Artifact.parts = 4
        + varint(len(part_bytes))
        + part_bytes
    )
    task_id = event.task_id.encode()
    context_id = event.context_id.encode()
    body = (
        (b"\x0a" + varint(len(task_id)) + task_id if task_id else b"")  # 1
        + (b"\x12" + varint(len(context_id)) + context_id if context_id else b"")  # 2
        + b"\x1a"  # artifact = 3
        + varint(len(artifact_bytes))
        + artifact_bytes
        + (b"\x20\x01" if event.append else b"")  # 4
        + (b"\x28\x01" if event.last_chunk else b"")  # 5
    )
    return b"\x22" + varint(len(body)) + body  # StreamResponse.artifact_update = 4
