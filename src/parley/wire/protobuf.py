"""Protobuf values for the gRPC codecs: free-form JSON (Struct, Value) and timestamps in
both directions, the reference route through ProtoJSON (`json_format`), and `UnusualShapeError`,
which a direct decoder raises to hand an unusual input to the reference route.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

try:
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("gRPC needs the grpc extra: pip install 'parley-a2a[grpc]'") from exc

from parley.model import JSONObject, JSONValue
from parley.protocol.errors import InternalError, InvalidParamsError, InvalidRequestError
from parley.wire.limits import active

Proto = Any
"""A protobuf message (generated classes are untyped)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EXACT = 2**53


class UnusualShapeError(Exception):
    """A direct decoder met something other than the ordinary shape: take the reference
    route, which accepts it or raises the error a JSON binding would raise."""


# --- free-form JSON (Struct, Value) ----------------------------------------------------------


def value_json(value: Proto, depth: int = 1) -> JSONValue:
    """A `google.protobuf.Value` as JSON. Numbers are doubles on this wire: integral ones
    come back as ints (what a JSON peer sent), so every binding yields the same model."""
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return str(value.string_value)
    if kind == "number_value":
        number = float(value.number_value)
        return int(number) if number.is_integer() and abs(number) <= _EXACT else number
    if kind == "bool_value":
        return bool(value.bool_value)
    if kind == "struct_value":
        return struct_json(value.struct_value, depth + 1)
    if kind == "list_value":
        if depth >= active().max_value_depth:
            raise UnusualShapeError
        return [value_json(item, depth + 1) for item in value.list_value.values]
    if kind == "null_value":
        return None
    raise UnusualShapeError  # no kind set: ProtoJSON has no spelling for it


def struct_json(struct: Proto, depth: int = 1) -> dict[str, JSONValue]:
    """A `google.protobuf.Struct` as a JSON object (depth-limited like JSON input)."""
    if depth > active().max_value_depth:
        raise UnusualShapeError
    fields = struct.fields  # by key: items() goes through the collections ABC's generator
    return {key: value_json(fields[key], depth) for key in fields}


def optional_struct(message: Proto, name: str) -> dict[str, JSONValue] | None:
    """A Struct field that may be absent (None)."""
    return struct_json(getattr(message, name)) if message.HasField(name) else None


def fill_value(target: Proto, value: JSONValue) -> None:
    """Set a `google.protobuf.Value` to a JSON value (protobuf's own `Struct.update` rules,
    without its per-value isinstance chain: exact types first)."""
    if value is None:
        target.null_value = 0
    elif value is True or value is False:
        target.bool_value = value
    elif type(value) is int or type(value) is float:
        target.number_value = value
    elif type(value) is str:
        target.string_value = value
    elif isinstance(value, Mapping):
        fill_struct(target.struct_value, value)  # an empty object is still an object
    elif isinstance(value, list | tuple):
        items = target.list_value
        items.SetInParent()  # an empty list is still a list
        add = items.values.add
        for item in value:
            fill_value(add(), item)
    else:
        _fill_subclass(target, value)


def _fill_subclass(target: Proto, value: object) -> None:
    """A subclass of bool, str, int or float, as protobuf takes them."""
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, int | float):
        target.number_value = value
    else:
        raise InternalError(f"Not a JSON value: {type(value).__name__}")


def fill_struct(target: Proto, value: JSONObject) -> None:
    """Set a Struct field (present even when empty), value by value."""
    target.SetInParent()
    fields = target.fields
    for key, item in value.items():
        fill_value(fields[key], item)


# --- timestamps --------------------------------------------------------------------------------


def fill_timestamp(target: Proto, moment: datetime) -> None:
    """A naive moment is UTC. A UTC one from its `timestamp()`, which is within half a
    microsecond of the instant for any datetime: less its microseconds, it rounds to
    the exact whole seconds (floor of the instant, so nanos stay non-negative)."""
    zone = moment.tzinfo
    if zone is UTC or zone is None:
        micro = moment.microsecond
        stamp = (moment if zone is UTC else moment.replace(tzinfo=UTC)).timestamp()
        target.seconds = round(stamp - micro / 1_000_000)
        target.nanos = micro * 1000
        return
    aware = moment
    delta = aware - _EPOCH
    target.seconds = delta.days * 86400 + delta.seconds
    target.nanos = delta.microseconds * 1000


def timestamp_datetime(value: Proto) -> datetime:
    """A Timestamp with whole microseconds inside datetime's range (else UnusualShapeError)."""
    nanos = int(value.nanos)
    if nanos % 1000 or not 0 <= nanos < 10**9:
        raise UnusualShapeError
    try:
        return _EPOCH + timedelta(seconds=int(value.seconds), microseconds=nanos // 1000)
    except OverflowError:
        raise UnusualShapeError from None


# --- the reference route ----------------------------------------------------------------------


def to_json(message: Proto) -> Any:
    """ProtoJSON of a message (JSON names, enums as names), for the JSON decoders."""
    try:
        return json_format.MessageToDict(message)
    except (ValueError, TypeError, json_format.Error) as exc:
        raise InvalidParamsError(f"Unrepresentable protobuf value: {exc}") from None


def from_json(value: Any, kind: type[Proto]) -> Proto:
    """A message of `kind` from a JSON codec's output (only our own output comes here)."""
    try:
        return json_format.ParseDict(value, kind())
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise InternalError(f"No {kind.DESCRIPTOR.full_name} for {value!r}: {exc}") from None


def parse(kind: type[Proto], data: bytes) -> Proto:
    """A request message from its bytes; garbage is InvalidRequestError."""
    try:
        return kind.FromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise InvalidRequestError(f"Malformed {kind.DESCRIPTOR.full_name}: {exc}") from None
