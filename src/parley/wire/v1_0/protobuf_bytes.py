"""The wire bytes of a 1.0 `StreamResponse` carrying a `TaskArtifactUpdateEvent`, written
directly: the event a streaming agent sends most (one per chunk). A chunk of one plain text
part is one bytes format of its pieces, the ids' fields written once per stream (kept by
ids); any other shape is joined level by level. Neither builds the protobuf
message or concatenates bytes field by field.

Written in field-number order with proto3's rules (empty strings, empty lists and false
booleans left out; a part's content always written, being a oneof member), which is also
the order the protobuf runtime serializes in: the bytes are the runtime's, byte for byte
(tested). Covered: any number of text, raw and URL parts with their filename and media type,
the artifact's id, name, description and extensions. Any metadata (the event's, the
artifact's or a part's) or a data part returns None, and the codec builds the message.
"""

from __future__ import annotations

from parley import model as m

_SMALL = tuple(bytes((n,)) for n in range(0x80))
_CONTENT = {m.TextPart: b"\x0a", m.RawPart: b"\x12", m.UrlPart: b"\x1a"}
"""Each covered part's content field (`Part.text = 1`, `raw = 2`, `url = 3`)."""
_TEXT = m.TextPart


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    if value < 0x4000:  # (a chunk's event with ids of 36 characters: no loop)
        return bytes((value & 0x7F | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _ids(task_id: str, context_id: str, artifact_id: str) -> tuple[bytes | None, bytes]:
    """The event's task_id (1) and context_id (2) fields, and the artifact's artifact_id
    field (1); None for the first when an id is empty (the fields would be left out)."""
    if not (task_id and context_id and artifact_id):
        return None, b""
    return _field(b"\x0a", task_id.encode()) + _field(b"\x12", context_id.encode()), _field(
        b"\x0a", artifact_id.encode()
    )


_IDS: dict[tuple[str, str, str], tuple[bytes | None, bytes]] = {}
"""The ids' fields of the streams' chunks, by (task_id, context_id, artifact_id): a stream's
chunks share them, and several streams write in turn (emptied past `_KEPT`)."""
_KEPT = 256

_CHUNK = b"\x22%b%b\x1a%b%b\x22%b\x0a%b%b%b"
"""A chunk: StreamResponse.artifact_update = 4 and its length, the ids' fields, the artifact
(3) and its length, its id's field, the part (Artifact.parts = 4) and its length, its text
(Part.text = 1) and its length, the text, append and last_chunk."""

_FLAGS = (b"", b"\x20\x01", b"\x28\x01", b"\x20\x01\x28\x01")
"""`append` (4) and `last_chunk` (5), by `append + 2 * last_chunk`."""


def artifact_update(event: m.TaskArtifactUpdateEvent) -> bytes | None:
    """`StreamResponse{artifact_update: event}` serialized, or None (not covered)."""
    artifact = event.artifact
    if event.metadata is not None or artifact.metadata is not None:
        return None
    parts = artifact.parts
    part = parts[0] if len(parts) == 1 else None
    if (
        type(part) is _TEXT
        and part.metadata is None
        and not (part.filename or part.media_type)
        and not (artifact.name or artifact.description or artifact.extensions)
    ):  # one plain text chunk (a streaming agent's): one format, every field but the flags
        key = (event.task_id, event.context_id, artifact.artifact_id)
        written = _IDS.get(key)
        if written is None:  # a stream's first chunk: its ids' fields, kept for the others
            if len(_IDS) >= _KEPT:
                _IDS.clear()
            written = _IDS[key] = _ids(*key)
        ids, artifact_id = written
        if ids is not None:
            small, varint = _SMALL, _varint
            text = part.text.encode()
            n = len(text)
            text_head = small[n] if n < 0x80 else varint(n)
            n += 1 + len(text_head)  # the part
            part_head = small[n] if n < 0x80 else varint(n)
            n += 1 + len(part_head) + len(artifact_id)  # the artifact
            artifact_head = small[n] if n < 0x80 else varint(n)
            flags = _FLAGS[event.append + 2 * event.last_chunk]
            n += 1 + len(artifact_head) + len(ids) + len(flags)  # the event
            return _CHUNK % (
                small[n] if n < 0x80 else varint(n),
                ids,
                artifact_head,
                artifact_id,
                part_head,
                text_head,
                text,
                flags,
            )
    return _written(event, artifact)


def _written(event: m.TaskArtifactUpdateEvent, artifact: m.Artifact) -> bytes | None:
    """Any other shape without metadata, joined level by level (not the common case)."""
    fields = [_field(b"\x0a", artifact.artifact_id.encode())]  # Artifact.artifact_id = 1
    fields.append(_field(b"\x12", artifact.name.encode()))  # 2
    fields.append(_field(b"\x1a", artifact.description.encode()))  # 3
    for part in artifact.parts:  # 4
        written = _part(part)
        if written is None:
            return None
        fields.append(b"\x22" + _varint(len(written)) + written)
    fields.extend(_field(b"\x32", e.encode(), always=True) for e in artifact.extensions)  # 6
    written_artifact = b"".join(fields)
    body = b"".join(
        (
            _field(b"\x0a", event.task_id.encode()),  # TaskArtifactUpdateEvent.task_id = 1
            _field(b"\x12", event.context_id.encode()),  # 2
            b"\x1a",  # artifact = 3
            _varint(len(written_artifact)),
            written_artifact,
            _FLAGS[event.append + 2 * event.last_chunk],  # 4, 5
        )
    )
    return b"\x22" + _varint(len(body)) + body  # StreamResponse.artifact_update = 4


def _field(tag: bytes, data: bytes, *, always: bool = False) -> bytes:
    """A length-delimited field; an empty one left out unless `always` (a oneof member or
    a repeated field's item)."""
    if not data and not always:
        return b""
    return tag + _varint(len(data)) + data


def _part(part: m.Part) -> bytes | None:
    """A part's bytes, or None (metadata or a data part: not covered)."""
    tag = _CONTENT.get(type(part))
    if tag is None or part.metadata is not None:
        return None
    if type(part) is m.RawPart:
        content = part.raw
    elif type(part) is m.UrlPart:
        content = part.url.encode()
    else:
        content = part.text.encode()
    return b"".join(
        (
            _field(tag, content, always=True),  # Part.text = 1, raw = 2, url = 3 (a oneof)
            _field(b"\x32", part.filename.encode()),  # 6
            _field(b"\x3a", part.media_type.encode()),  # 7
        )
    )
