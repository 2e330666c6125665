"""Parts in their 0.3 JSON-RPC form: `text`, `file` (bytes xor uri) and `data` (an
object), each with its `kind`; the hot path reads and writes plain text parts inline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from parley.model import DataPart, Part, RawPart, TextPart, UrlPart
from parley.protocol.errors import InternalError, InvalidParamsError
from parley.wire.limits import active
from parley.wire.protojson.fields import free
from parley.wire.reader import b64decode, b64encode, check_depth, fail
from parley.wire.v0_3.fields import (
    Obj,
    items,
    kind_error,
    nested,
    obj,
    optional_metadata,
    optional_text,
    shallow_enough,
)


def encode_part(part: Part) -> Obj:
    """Text and data parts lose `media_type`/`filename` (0.3 has no place for them);
    a non-object data value is wrapped as `{"value": <value>}` (0.3 data is an object).
    """
    if type(part) is TextPart:
        out: Obj = {"kind": "text", "text": part.text}
    elif type(part) is DataPart:
        data = part.data
        if type(data) is not dict:
            data = dict(data) if isinstance(data, Mapping) else {"value": data}
        out = {"kind": "data", "data": data}
    elif type(part) is RawPart:
        out = {"kind": "file", "file": _file(part, "bytes", b64encode(part.raw))}
    elif type(part) is UrlPart:
        out = {"kind": "file", "file": _file(part, "uri", part.url)}
    else:
        raise InternalError(f"Not a part: {type(part).__name__}")
    if part.metadata is not None:
        out["metadata"] = free(part.metadata)
    return out


def encode_parts(parts: tuple[Part, ...]) -> list[Obj]:
    """Plain text parts (the common case) are written inline; a lone one without the
    comprehension (a function made and called, on this Python)."""
    if len(parts) == 1:
        part = parts[0]
        if type(part) is TextPart and part.metadata is None:
            return [{"kind": "text", "text": part.text}]
    return [
        {"kind": "text", "text": p.text}
        if type(p) is TextPart and p.metadata is None
        else encode_part(p)
        for p in parts
    ]


def _file(part: RawPart | UrlPart, key: str, content: str) -> Obj:
    out: Obj = {key: content}
    if part.filename:
        out["name"] = part.filename
    if part.media_type:
        out["mimeType"] = part.media_type
    return out


def decode_part(value: Any) -> Part:
    kind = value.get("kind") if type(value) is dict else None
    if kind == "text":
        content = value.get("text")
        if type(content) is str and value.get("metadata") is None:
            return TextPart(text=content)
        return _text_part(value)
    if kind == "data":
        return _data_part(value)
    if kind == "file":
        return _file_part(value)
    kind_error(value, "'text', 'file' or 'data'")


def _text_part(d: Obj) -> TextPart:
    content = d.get("text")
    if type(content) is not str:
        fail("", "text", "is required" if content is None else "expected a string")
    return TextPart(text=content, metadata=optional_metadata(d.get("metadata")))


def _data_part(d: Obj) -> DataPart:
    data = d.get("data")
    if type(data) is not dict:
        fail("", "data", "is required" if data is None else "expected a JSON object")
    if not shallow_enough(data, 1):
        check_depth(data, "data")  # raises, naming the field
    return DataPart(data=data, metadata=optional_metadata(d.get("metadata")))


def _file_part(d: Obj) -> RawPart | UrlPart:
    file = nested(d.get("file"), obj, "file")
    raw, url = file.get("bytes"), file.get("uri")
    name = optional_text(file.get("name"), "file.name")
    media_type = optional_text(file.get("mimeType"), "file.mimeType")
    meta = optional_metadata(d.get("metadata"))
    if raw is not None and url is not None:
        fail("file", "", "has both bytes and uri; expected exactly one")
    if raw is not None:
        content = b64decode(raw, "file", "bytes")
        return RawPart(raw=content, media_type=media_type, filename=name, metadata=meta)
    if type(url) is not str:
        fail("file", "uri" if url is not None else "", "expected bytes or a uri string")
    return UrlPart(url=url, media_type=media_type, filename=name, metadata=meta)


def decode_parts(value: Any) -> tuple[Part, ...]:
    """At least one part; plain text parts (the common case) are read inline."""
    if type(value) is not list or not value or len(value) > active().max_parts:
        _bad_parts(value)
    if len(value) == 1:  # a lone plain text part (the usual message): no list to build
        item = value[0]
        if type(item) is dict and item.get("kind") == "text":
            content = item.get("text")
            if type(content) is str and item.get("metadata") is None:
                return (TextPart(text=content),)
    out: list[Part] = []
    append = out.append
    try:
        for item in value:
            if type(item) is dict and item.get("kind") == "text":
                content = item.get("text")
                if type(content) is str and item.get("metadata") is None:
                    append(TextPart(text=content))
                    continue
            append(decode_part(item))
    except InvalidParamsError:
        items(value, decode_part, "parts")  # decodes again, raising with the item's index
        raise
    return tuple(out)


def _bad_parts(value: Any) -> NoReturn:
    if value is None or value == []:
        fail("", "parts", "is required (at least one part)")
    if type(value) is not list:
        fail("", "parts", "expected a list of parts")
    fail("", "parts", f"more than {active().max_parts} parts")
