"""A 1.0 `SendMessageRequest` read from its wire bytes straight into the model, without
building protobuf messages first: the ordinary shape only (one message of text, raw or
url parts; free-form metadata of strings, numbers, booleans and nulls), about half the
instructions of parsing the message and reading its fields.

Anything else returns None and the codec takes the message route, which accepts it or
names the error as it always has: a configuration, a data part, a nested Struct or
list, a field the layout below lacks, a field repeated where protobuf would merge or
let the last one win, a wrong wire type, bytes that end early or are not UTF-8, an
unknown role, an empty message id, no parts or too many. What it returns equals what
the message route returns (tested), except that a Struct's members keep the order the
sender wrote them in (protobuf's map order is its hash order; JSON objects have none).
Built only for a proto whose fields are exactly LAYOUT's (`reader_for`): 1.0's.
"""

from __future__ import annotations

from collections.abc import Callable
from struct import Struct
from typing import Any

from parley import model as m
from parley.wire.limits import active
from parley.wire.protobuf import Proto, UnusualShapeError

LAYOUT: dict[str, tuple[tuple[str, int], ...]] = {
    "SendMessageRequest": (("tenant", 1), ("message", 2), ("configuration", 3), ("metadata", 4)),
    "SendMessageConfiguration": (
        ("accepted_output_modes", 1),
        ("task_push_notification_config", 2),
        ("history_length", 3),
        ("return_immediately", 4),
    ),
    "Message": (
        ("message_id", 1),
        ("context_id", 2),
        ("task_id", 3),
        ("role", 4),
        ("parts", 5),
        ("metadata", 6),
        ("extensions", 7),
        ("reference_task_ids", 8),
    ),
    "Part": (
        ("text", 1),
        ("raw", 2),
        ("url", 3),
        ("data", 4),
        ("metadata", 5),
        ("filename", 6),
        ("media_type", 7),
    ),
}
"""The messages read, each with its fields' names and numbers, all of them."""

_DOUBLE = Struct("<d").unpack_from
_EXACT = 2**53
_ROLES = {int(role): role for role in m.Role}


def _length(data: bytes, i: int, end: int) -> tuple[int, int]:
    """A length prefix of several bytes at `i`: where its field starts and ends."""
    value = shift = 0
    while i < end:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return i, i + value
        shift += 7
        if shift > 28:
            raise UnusualShapeError
    raise UnusualShapeError


# Each reader walks its message's fields: a tag byte (every field here has a number below
# 16), then a length (one byte, or `_length`), then the body; a varint field is read on its
# own. A body that would end past its message raises; an index past the data raises
# IndexError; both mean: not the ordinary shape. One branch per field, inline rather than
# a helper per field: a call costs more than the field (hence their complexity).


def _value(data: bytes, i: int, end: int) -> Any:
    """A `google.protobuf.Value` of one scalar kind, as value_json reads it."""
    tag = data[i]
    if tag == 0x1A:  # string_value
        n = data[i + 1]
        if n < 0x80:
            i += 2
            stop = i + n
        else:
            i, stop = _length(data, i + 1, end)
        value: Any = data[i:stop].decode()
        i = stop
    elif tag == 0x11 and i + 9 <= end:  # number_value
        number = _DOUBLE(data, i + 1)[0]
        i += 9
        value = int(number) if number.is_integer() and abs(number) <= _EXACT else number
    elif tag == 0x20 and data[i + 1] < 2:  # bool_value
        value = data[i + 1] == 1
        i += 2
    elif tag == 0x08 and data[i + 1] < 0x80:  # null_value
        value = None
        i += 2
    else:
        raise UnusualShapeError  # a struct or list, or anything odd
    if i != end:
        raise UnusualShapeError  # past its end, or a second kind (protobuf lets the last one win)
    return value


def _struct(data: bytes, i: int, end: int) -> dict[str, Any]:
    """A `google.protobuf.Struct` of scalar values (entries: key 1, then value 2)."""
    if active().max_value_depth < 1:
        raise UnusualShapeError
    fields: dict[str, Any] = {}
    while i < end:
        if data[i] != 0x0A:  # an entry
            raise UnusualShapeError
        n = data[i + 1]
        start, i = (i + 2, i + 2 + n) if n < 0x80 else _length(data, i + 1, end)
        if i > end or data[start] != 0x0A:  # its key
            raise UnusualShapeError
        n = data[start + 1]
        if n >= 0x80:
            raise UnusualShapeError  # a key of 128 bytes or more: the message route
        at = start + 2 + n
        if at >= i or data[at] != 0x12:
            raise UnusualShapeError
        key = data[start + 2 : at].decode()
        n = data[at + 1]
        if n < 0x80:
            value_start = at + 2
            value_end = value_start + n
        else:
            value_start, value_end = _length(data, at + 1, i)
        if value_end != i:
            raise UnusualShapeError
        fields[key] = _value(data, value_start, value_end)
    if i != end:
        raise UnusualShapeError
    return fields


def _part(data: bytes, i: int, end: int) -> m.Part:  # noqa: C901 - see below
    kind = None
    content: Any = None
    media = filename = ""
    metadata = None
    while i < end:
        tag = data[i]
        n = data[i + 1]
        start, i = (i + 2, i + 2 + n) if n < 0x80 else _length(data, i + 1, end)
        if i > end or tag & 7 != 2:
            raise UnusualShapeError
        if tag <= 0x1A:  # text, raw, url: one of them
            if kind is not None:
                raise UnusualShapeError
            kind = tag
            content = data[start:i] if tag == 0x12 else data[start:i].decode()
        elif tag == 0x2A and metadata is None:
            metadata = _struct(data, start, i)
        elif tag == 0x32:
            filename = data[start:i].decode()
        elif tag == 0x3A:
            media = data[start:i].decode()
        else:
            raise UnusualShapeError
    if kind == 0x0A:
        return m.TextPart(text=content, media_type=media, filename=filename, metadata=metadata)
    if kind == 0x1A:
        return m.UrlPart(url=content, media_type=media, filename=filename, metadata=metadata)
    if kind == 0x12:
        return m.RawPart(raw=content, media_type=media, filename=filename, metadata=metadata)
    raise UnusualShapeError


def _message(data: bytes, i: int, end: int) -> m.Message:  # noqa: C901 - see below
    message_id = context_id = task_id = ""
    role = None
    parts: list[m.Part] = []
    metadata = None
    extensions: list[str] = []
    references: list[str] = []
    while i < end:
        tag = data[i]
        n = data[i + 1]
        if tag == 0x20 and n < 0x80:  # role, a varint
            role = _ROLES.get(n)  # unknown: None
            i += 2
            continue
        start, i = (i + 2, i + 2 + n) if n < 0x80 else _length(data, i + 1, end)
        if i > end:
            raise UnusualShapeError
        if tag == 0x2A:
            parts.append(_part(data, start, i))
        elif tag == 0x0A:
            message_id = data[start:i].decode()
        elif tag == 0x12:
            context_id = data[start:i].decode()
        elif tag == 0x1A:
            task_id = data[start:i].decode()
        elif tag == 0x32 and metadata is None:
            metadata = _struct(data, start, i)
        elif tag == 0x3A:
            extensions.append(data[start:i].decode())
        elif tag == 0x42:
            references.append(data[start:i].decode())
        else:
            raise UnusualShapeError
    if not message_id or role is None or not parts or len(parts) > active().max_parts:
        raise UnusualShapeError
    return m.Message(
        message_id=message_id,
        role=role,
        parts=tuple(parts),
        context_id=context_id,
        task_id=task_id,
        metadata=metadata,
        extensions=tuple(extensions),
        reference_task_ids=tuple(references),
    )


def read_send(data: bytes) -> m.SendMessageRequest | None:
    """A SendMessageRequest of the ordinary shape from its bytes, or None."""
    tenant = ""
    message = metadata = None
    i, end = 0, len(data)
    try:
        while i < end:
            tag = data[i]
            n = data[i + 1]
            start, i = (i + 2, i + 2 + n) if n < 0x80 else _length(data, i + 1, end)
            if i > end:
                return None
            if tag == 0x12 and message is None:
                message = _message(data, start, i)
            elif tag == 0x0A:
                tenant = data[start:i].decode()
            elif tag == 0x22 and metadata is None:
                metadata = _struct(data, start, i)
            else:
                return None  # a configuration, or anything odd
    except (UnusualShapeError, IndexError, UnicodeDecodeError):
        return None
    if message is None:
        return None
    return m.SendMessageRequest(message=message, metadata=metadata, tenant=tenant)


def reader_for(
    messages: dict[str, type[Proto]],
) -> Callable[[bytes], m.SendMessageRequest | None] | None:
    """`read_send` if every message named in LAYOUT is given and has exactly its fields
    there (names and numbers), else None (another proto: the message route)."""
    for name, fields in LAYOUT.items():
        kind = messages.get(name)
        if kind is None:
            return None
        found = tuple(sorted((f.name, f.number) for f in kind.DESCRIPTOR.fields))
        if found != tuple(sorted(fields)):
            return None
    return read_send
