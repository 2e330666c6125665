"""The stores' own encoding of model objects (row format 1), shared by the SQLite and
PostgreSQL backends; independent of every wire codec, so a codec's change never changes
what a database holds (`docs/decisions.md`, "Stores keep their own format").

Format 1: a model object is a JSON object of its fields under the model's own names, a
field at its default left out; enums are their numbers, timestamps RFC 3339 as msgspec
writes them (their zone kept), bytes base64; a part is told by which of `text`, `raw`,
`url` or `data` it has. Rows are trusted (this module wrote them): reading checks nothing.
A change to this form is a new format number, with a migration that rewrites the rows.
"""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from parley.model import (
    Artifact,
    AuthenticationInfo,
    DataPart,
    Message,
    Part,
    RawPart,
    Role,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)

FORMAT = 1
"""The row format this code writes; the schema-version table records it (`row_format`)
with the migration that rewrote the rows into it."""

JSON = Any
"""A parsed JSON value read back from the database."""

Obj = dict[str, Any]

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode
_ROLES = {int(role): role for role in Role}
_STATES = {int(state): state for state in TaskState}
_parse_time = datetime.fromisoformat


def dumps(value: JSON) -> str:
    return _encode(value).decode("utf-8")


def loads(text: str | bytes) -> JSON:
    return _decode(text)


def _object(value: Mapping[str, Any]) -> Obj:
    return value if type(value) is dict else dict(value)


# ----------------------------------------------------------------------------- writing


def encode_part(part: Part) -> Obj:
    kind = type(part)
    if kind is TextPart:
        out: Obj = {"text": part.text}
    elif kind is DataPart:
        out = {"data": part.data}  # type: ignore[union-attr]
    elif kind is UrlPart:
        out = {"url": part.url}  # type: ignore[union-attr]
    else:
        out = {"raw": part.raw}  # type: ignore[union-attr]
    if part.media_type:
        out["media_type"] = part.media_type
    if part.filename:
        out["filename"] = part.filename
    if part.metadata is not None:
        out["metadata"] = _object(part.metadata)
    return out


def encode_message(message: Message) -> Obj:
    out: Obj = {
        "message_id": message.message_id,
        "role": message.role,
        "parts": [encode_part(part) for part in message.parts],
    }
    if message.context_id:
        out["context_id"] = message.context_id
    if message.task_id:
        out["task_id"] = message.task_id
    if message.metadata is not None:
        out["metadata"] = _object(message.metadata)
    if message.extensions:
        out["extensions"] = message.extensions
    if message.reference_task_ids:
        out["reference_task_ids"] = message.reference_task_ids
    return out


def encode_status(status: TaskStatus) -> Obj:
    out: Obj = {"state": status.state}
    if status.message is not None:
        out["message"] = encode_message(status.message)
    if status.timestamp is not None:
        out["timestamp"] = status.timestamp
    return out


def encode_header(artifact: Artifact) -> Obj:
    """An artifact but its parts (they are stored apart, as chunks)."""
    out: Obj = {"artifact_id": artifact.artifact_id}
    if artifact.name:
        out["name"] = artifact.name
    if artifact.description:
        out["description"] = artifact.description
    if artifact.metadata is not None:
        out["metadata"] = _object(artifact.metadata)
    if artifact.extensions:
        out["extensions"] = artifact.extensions
    return out


def encode_push_config(config: TaskPushNotificationConfig) -> Obj:
    out: Obj = {"url": config.url}
    if config.task_id:
        out["task_id"] = config.task_id
    if config.id:
        out["id"] = config.id
    if config.token:
        out["token"] = config.token
    auth = config.authentication
    if auth is not None:
        out["authentication"] = (
            {"scheme": auth.scheme, "credentials": auth.credentials}
            if auth.credentials
            else {"scheme": auth.scheme}
        )
    if config.tenant:
        out["tenant"] = config.tenant
    return out


# ----------------------------------------------------------------------------- reading


def decode_part(d: Obj) -> Part:
    if len(d) == 1 and "text" in d:  # the usual part: text alone
        return TextPart(text=d["text"])
    media, filename, metadata = d.get("media_type", ""), d.get("filename", ""), d.get("metadata")
    if "text" in d:
        return TextPart(text=d["text"], media_type=media, filename=filename, metadata=metadata)
    if "url" in d:
        return UrlPart(url=d["url"], media_type=media, filename=filename, metadata=metadata)
    if "raw" in d:
        raw = b64decode(d["raw"])
        return RawPart(raw=raw, media_type=media, filename=filename, metadata=metadata)
    return DataPart(data=d["data"], media_type=media, filename=filename, metadata=metadata)


def decode_message(d: Obj) -> Message:
    get = d.get
    return Message(
        message_id=d["message_id"],
        role=_ROLES[d["role"]],
        parts=tuple([decode_part(part) for part in d["parts"]]),
        context_id=get("context_id", ""),
        task_id=get("task_id", ""),
        metadata=get("metadata"),
        extensions=tuple(get("extensions", ())),
        reference_task_ids=tuple(get("reference_task_ids", ())),
    )


def decode_status(d: Obj) -> TaskStatus:
    message, timestamp = d.get("message"), d.get("timestamp")
    return TaskStatus(
        state=_STATES[d["state"]],
        message=None if message is None else decode_message(message),
        timestamp=None if timestamp is None else _parse_time(timestamp),
    )


def decode_artifact(header: Obj, chunks: list[list[Obj]]) -> Artifact:
    """An artifact from its header and its chunks' part arrays, in order."""
    get = header.get
    return Artifact(
        artifact_id=header["artifact_id"],
        parts=tuple([decode_part(part) for chunk in chunks for part in chunk]),
        name=get("name", ""),
        description=get("description", ""),
        metadata=get("metadata"),
        extensions=tuple(get("extensions", ())),
    )


def decode_push_config(d: Obj) -> TaskPushNotificationConfig:
    auth = d.get("authentication")
    return TaskPushNotificationConfig(
        url=d["url"],
        task_id=d.get("task_id", ""),
        id=d.get("id", ""),
        token=d.get("token", ""),
        authentication=None
        if auth is None
        else AuthenticationInfo(scheme=auth["scheme"], credentials=auth.get("credentials", "")),
        tenant=d.get("tenant", ""),
    )
