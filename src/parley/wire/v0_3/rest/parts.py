"""Parts in the 0.3 proto's JSON form: `{text}`, `{file: {fileWithUri | fileWithBytes,
mimeType}}` and `{data: {data: {...}}}`; no `kind`, and no part metadata or file name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from parley.model import DataPart, JSONObject, JSONValue, Part, RawPart, TextPart, UrlPart
from parley.protocol.errors import InternalError, InvalidParamsError
from parley.wire.limits import active
from parley.wire.reader import (
    Obj,
    b64decode,
    b64encode,
    fail,
    nested,
    opt_str,
    struct,
    under,
)
from parley.wire.v0_3.rest.fields import obj, one_of

_MEMBERS = (("text", None), ("file", None), ("data", None))
_FILE_MEMBERS = (("fileWithUri", "file_with_uri"), ("fileWithBytes", "file_with_bytes"))


def encode_part(part: Part) -> Obj:
    """The v0.3.0 proto has no part metadata, file name, or media type of text and data
    parts: they are dropped. A non-object data value is wrapped as `{"value": <value>}`
    (a proto DataPart holds a Struct)."""
    if type(part) is TextPart:
        return {"text": part.text}
    if type(part) is DataPart:
        data = part.data
        if type(data) is not dict:
            data = dict(data) if isinstance(data, Mapping) else {"value": data}
        return {"data": {"data": data}}
    if type(part) is RawPart:
        return {"file": _file("fileWithBytes", b64encode(part.raw), part.media_type)}
    if type(part) is UrlPart:
        return {"file": _file("fileWithUri", part.url, part.media_type)}
    raise InternalError(f"Not a part: {type(part).__name__}")


def _file(key: str, content: str, media_type: str) -> Obj:
    out: Obj = {key: content}
    if media_type:
        out["mimeType"] = media_type
    return out


def encode_parts(parts: tuple[Part, ...]) -> list[Obj]:
    return [{"text": p.text} if type(p) is TextPart else encode_part(p) for p in parts]


def decode_part(value: Any) -> Part:
    """Exactly one of text, file and data. `metadata` and a file's `name` (fields of the
    a2a-sdk's later 0.3 proto, not of v0.3.0) are read when a peer sends them."""
    d = obj(value)
    if len(d) == 1:
        text = d.get("text")
        if type(text) is str:
            return TextPart(text=text)
    key, inner = one_of(d, _MEMBERS)
    metadata = struct(d, "metadata", "")
    if key == "text":
        if type(inner) is not str:
            fail("", "text", "expected a string")
        return TextPart(text=inner, metadata=metadata)
    if key == "file":
        return nested("file", lambda f: _decode_file(f, metadata), inner)
    data = nested("data", _decode_data, inner)
    return DataPart(data=data, metadata=metadata)


def _decode_file(value: Any, metadata: JSONObject | None) -> RawPart | UrlPart:
    d = obj(value)
    key, content = one_of(d, _FILE_MEMBERS)
    media_type = opt_str(d, "mimeType", "", "mime_type")
    filename = opt_str(d, "name", "")
    if key == "fileWithBytes":
        raw = b64decode(content, "", key)
        return RawPart(raw=raw, media_type=media_type, filename=filename, metadata=metadata)
    if type(content) is not str:
        fail("", key, "expected a string")
    return UrlPart(url=content, media_type=media_type, filename=filename, metadata=metadata)


def _decode_data(value: Any) -> JSONValue:
    """The DataPart message: its `data` Struct (absent: an empty object)."""
    d = obj(value)
    data: JSONValue = d.get("data")
    if data is None:
        return {}
    struct(d, "data", "")  # a depth-checked object, or an error naming `data`
    return data


def decode_parts(d: Obj, key: str) -> tuple[Part, ...]:
    """A list of at least one part (`content` of a message, `parts` of an artifact);
    plain text parts (the common case) are read inline."""
    value = d.get(key)
    if type(value) is not list or not value or len(value) > active().max_parts:
        _bad_parts(value, key)
    out: list[Part] = []
    append = out.append
    for item in value:
        if type(item) is dict and len(item) == 1:
            text = item.get("text")
            if type(text) is str:
                append(TextPart(text=text))
                continue
        try:
            append(decode_part(item))
        except InvalidParamsError as exc:
            raise under(exc, f"{key}[{len(out)}]") from None
    return tuple(out)


def _bad_parts(value: Any, key: str) -> NoReturn:
    if value is None or value == []:
        fail("", key, "at least one part is required")
    if type(value) is not list:
        fail("", key, "expected a list")
    fail("", key, f"more than {active().max_parts} parts")
