"""Parts in ProtoJSON: the 1.0 form (`{text | raw | url | data, mediaType, filename,
metadata}`), the 0.3 form (`{text}`, `{file: {fileWithUri | fileWithBytes, mimeType}}`,
`{data: {data: {...}}}`, no part metadata or file name), and the one list reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from parley.model import DataPart, JSONObject, JSONValue, Part, RawPart, TextPart, UrlPart
from parley.protocol.errors import InternalError, InvalidParamsError
from parley.wire.limits import active
from parley.wire.protojson.fields import free, obj, one_of, present
from parley.wire.reader import (
    Obj,
    b64decode,
    b64encode,
    check_depth,
    fail,
    nested,
    opt_str,
    struct,
    under,
)

# --- the 1.0 form ------------------------------------------------------------------------------


def encode_part(part: Part) -> Obj:
    if type(part) is TextPart:
        out: Obj = {"text": part.text}
    elif type(part) is DataPart:
        out = {"data": part.data}
    elif type(part) is UrlPart:
        out = {"url": part.url}
    elif type(part) is RawPart:
        out = {"raw": b64encode(part.raw)}
    else:
        raise InternalError(f"Not a part: {type(part).__name__}")
    if part.media_type:
        out["mediaType"] = part.media_type
    if part.filename:
        out["filename"] = part.filename
    if part.metadata is not None:
        out["metadata"] = free(part.metadata)
    return out


def encode_parts(parts: tuple[Part, ...]) -> list[Obj]:
    """A lone part (the common case) inline if plain text, else by a plain call; the
    others by map (no comprehension: a function made and called, on this Python)."""
    if len(parts) == 1:
        part = parts[0]
        if (
            type(part) is TextPart
            and part.metadata is None
            and not part.media_type
            and not part.filename
        ):  # a plain text part, written here
            return [{"text": part.text}]
        return [encode_part(part)]
    return list(map(encode_part, parts))


def decode_part(value: Any) -> Part:
    """Exactly one of text/raw/url/data; `{"data": null}` is data holding JSON null."""
    d = obj(value)
    text, raw, url = d.get("text"), d.get("raw"), d.get("url")
    if (text is not None) + (raw is not None) + (url is not None) + ("data" in d) != 1:
        fail("", "", "exactly one of text, raw, url and data is required")
    media, filename, metadata = ("", "", None) if len(d) == 1 else _part_extras(d)
    if text is not None:
        if type(text) is not str:
            fail("", "text", "expected a string")
        return TextPart(text=text, media_type=media, filename=filename, metadata=metadata)
    if url is not None:
        if type(url) is not str:
            fail("", "url", "expected a string")
        return UrlPart(url=url, media_type=media, filename=filename, metadata=metadata)
    if raw is not None:
        data = b64decode(raw, "", "raw")
        return RawPart(raw=data, media_type=media, filename=filename, metadata=metadata)
    data = d["data"]
    if type(data) is dict or type(data) is list:
        check_depth(data, "data")
    return DataPart(data=data, media_type=media, filename=filename, metadata=metadata)


def _part_extras(d: Obj) -> tuple[str, str, Any]:
    media = d.get("mediaType")
    if type(media) is not str:
        media = opt_str(d, "mediaType", "", "media_type")
    filename = d.get("filename")
    if type(filename) is not str:
        filename = opt_str(d, "filename", "")
    metadata = d.get("metadata")
    if metadata is not None:
        metadata = struct(d, "metadata", "")
    return media, filename, metadata


# --- the 0.3 form ------------------------------------------------------------------------------

_MEMBERS_V0_3 = (("text", None), ("file", None), ("data", None))
_FILE_MEMBERS_V0_3 = (("fileWithUri", "file_with_uri"), ("fileWithBytes", "file_with_bytes"))


def encode_part_v0_3(part: Part) -> Obj:
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


def encode_parts_v0_3(parts: tuple[Part, ...]) -> list[Obj]:
    """A lone text part (the common case) without the comprehension (a function made and
    called, on this Python)."""
    if len(parts) == 1 and type(parts[0]) is TextPart:
        return [{"text": parts[0].text}]
    return [{"text": p.text} if type(p) is TextPart else encode_part_v0_3(p) for p in parts]


def decode_part_v0_3(value: Any) -> Part:
    """Exactly one of text, file and data. `metadata` and a file's `name` (fields of the
    a2a-sdk's later 0.3 proto, not of v0.3.0) are read when a peer sends them."""
    d = present(value)
    if len(d) == 1:
        text = d.get("text")
        if type(text) is str:
            return TextPart(text=text)
    key, inner = one_of(d, _MEMBERS_V0_3)
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
    d = present(value)
    key, content = one_of(d, _FILE_MEMBERS_V0_3)
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
    d = present(value)
    data: JSONValue = d.get("data")
    if data is None:
        return {}
    struct(d, "data", "")  # a depth-checked object, or an error naming `data`
    return data


# --- the list ----------------------------------------------------------------------------------


def decode_parts(d: Obj, key: str, decode: Callable[[Any], Part]) -> tuple[Part, ...]:
    """A REQUIRED list of at least one part under `key` (`parts`; a 0.3 message's
    `content`); a plain text part (the common case, the same in both forms) is read inline."""
    value = d.get(key)
    if type(value) is not list or not value or len(value) > active().max_parts:
        _bad_parts(value, key)
    if len(value) == 1:  # a lone text part (the usual message): no list to build
        item = value[0]
        if type(item) is dict and len(item) == 1:
            text = item.get("text")
            if type(text) is str:
                return (TextPart(text=text),)
    out: list[Part] = []
    append = out.append
    for item in value:
        if type(item) is dict and len(item) == 1:
            text = item.get("text")
            if type(text) is str:
                append(TextPart(text=text))
                continue
        try:
            append(decode(item))
        except InvalidParamsError as exc:
            raise under(exc, f"{key}[{len(out)}]") from None
    return tuple(out)


def _bad_parts(value: Any, key: str) -> NoReturn:
    if value is None or value == []:
        fail("", key, "at least one part is required")
    if type(value) is not list:
        fail("", key, "expected a list")
    fail("", key, f"more than {active().max_parts} parts")
