"""Typed field readers shared by the JSON codecs: one place that turns bad input into
InvalidParamsError naming the field (R-ERR-10), never KeyError or TypeError.

`path` arguments name the enclosing object for error messages only; they are
joined lazily, on the error path.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn, TypeVar

from parley.model import JSONObject, JSONValue
from parley.protocol.errors import InvalidParamsError, invalid_field
from parley.wire.limits import active

Obj = dict[str, Any]
T = TypeVar("T")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def fail(path: str, key: str, description: str) -> NoReturn:
    raise invalid_field(f"{path}.{key}" if path and key else path or key, description)


def under(exc: InvalidParamsError, prefix: str) -> InvalidParamsError:
    """The same violation with its field path put under `prefix` (`parts[0]` + `text`)."""
    if not exc.field_violations:
        return invalid_field(prefix, exc.message)
    inner = exc.field_violations[0].field
    if not inner:
        path = prefix
    elif inner.startswith("["):
        path = prefix + inner
    else:
        path = f"{prefix}.{inner}"
    return invalid_field(path, exc.field_violations[0].description)


def nested(key: str, decode: Callable[[Any], T], value: Any) -> T:
    """Decode a nested object, naming `key` in any error."""
    try:
        return decode(value)
    except InvalidParamsError as exc:
        raise under(exc, key) from None


def listed(key: str, decode: Callable[[Any], T], items: Any) -> tuple[T, ...]:
    """Decode an optional JSON list item by item; an error names the index (`parts[2]`)."""
    if items is None:
        return ()
    if type(items) is not list:
        fail("", key, "expected a list")
    try:
        return tuple(map(decode, items))
    except InvalidParamsError as exc:
        raise under(exc, f"{key}[{_failure_index(decode, items)}]") from None


def _failure_index(decode: Callable[[Any], object], items: list[Any]) -> int:
    """Which item fails (found again only once decoding has failed: errors are rare)."""
    for index, item in enumerate(items):
        try:
            decode(item)
        except InvalidParamsError:
            return index
    return 0  # pragma: no cover - decoders are deterministic


def field(d: Obj, camel: str, snake: str | None = None) -> Any:
    """A field by its JSON name, or by its proto name (ProtoJSON accepts both); None if absent."""
    value = d.get(camel)
    if value is None and snake is not None:
        value = d.get(snake)
    return value


def req_str(d: Obj, camel: str, path: str, snake: str | None = None) -> str:
    value = field(d, camel, snake)
    if type(value) is str and value:
        return value
    fail(path, camel, "is required" if value in (None, "") else "expected a string")


def opt_str(d: Obj, camel: str, path: str, snake: str | None = None) -> str:
    value = field(d, camel, snake)
    if value is None:
        return ""
    if type(value) is str:
        return value
    fail(path, camel, "expected a string")


def opt_str_or_none(d: Obj, camel: str, path: str, snake: str | None = None) -> str | None:
    value = field(d, camel, snake)
    if value is None or type(value) is str:
        return value
    fail(path, camel, "expected a string")


def opt_bool(d: Obj, camel: str, path: str, snake: str | None = None) -> bool | None:
    value = field(d, camel, snake)
    if value is None or type(value) is bool:
        return value
    fail(path, camel, "expected true or false")


def opt_int32(d: Obj, camel: str, path: str, snake: str | None = None) -> int | None:
    """An int32; ProtoJSON also allows integral floats and decimal strings."""
    value = field(d, camel, snake)
    if value is None:
        return None
    if (type(value) is str and re.fullmatch(r"-?\d{1,11}", value)) or (
        type(value) is float and value.is_integer()
    ):
        value = int(value)
    if type(value) is not int:
        fail(path, camel, "expected an integer")
    if not INT32_MIN <= value <= INT32_MAX:
        fail(path, camel, "integer out of the int32 range")
    return value


def str_list(d: Obj, camel: str, path: str, snake: str | None = None) -> tuple[str, ...]:
    value = field(d, camel, snake)
    if value is None:
        return ()
    if type(value) is list and all(type(item) is str for item in value):
        return tuple(value)
    fail(path, camel, "expected a list of strings")


def str_map(d: Obj, camel: str, path: str, snake: str | None = None) -> dict[str, str]:
    value = field(d, camel, snake)
    if value is None:
        return {}
    if type(value) is dict and all(type(v) is str for v in value.values()):
        return value
    fail(path, camel, "expected an object of strings")


def struct(
    d: Obj, camel: str, path: str, snake: str | None = None, max_depth: int | None = None
) -> JSONObject | None:
    """A free-form object (protobuf Struct), depth-checked."""
    value = field(d, camel, snake)
    if value is None:
        return None
    if type(value) is not dict:
        fail(path, camel, "expected a JSON object")
    check_depth(value, f"{path}.{camel}" if path else camel, max_depth)
    return value


def check_depth(value: JSONValue, path: str, max_depth: int | None = None) -> None:
    """Refuse free-form JSON nested deeper than the limit (iterative: no recursion)."""
    limit = active().max_value_depth if max_depth is None else max_depth
    stack: list[tuple[JSONValue, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item if type(item) is list else ()
        for child in children:
            if type(child) is dict or type(child) is list:
                if depth + 1 > limit:
                    fail(path, "", f"nested deeper than {limit} levels")
                stack.append((child, depth + 1))


def b64decode(value: object, path: str, key: str) -> bytes:
    """Base64 (standard or URL-safe, padded or not), as ProtoJSON `bytes` allows."""
    if type(value) is not str:
        fail(path, key, "expected a base64 string")
    text = value.replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        fail(path, key, "invalid base64")


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(Z|z|[+-]\d{2}:\d{2})?"
)


def timestamp(d: Obj, camel: str, path: str, snake: str | None = None) -> datetime | None:
    """An RFC 3339 timestamp, converted to UTC. A zone-less value is read as UTC (0.3)."""
    value = field(d, camel, snake)
    if value is None:
        return None
    if type(value) is str:
        match = _TIMESTAMP.fullmatch(value)
        if match:
            try:
                return _to_datetime(match)
            except (ValueError, OverflowError):
                pass
    fail(path, camel, "expected an RFC 3339 timestamp, e.g. 2025-10-28T10:30:00.000Z")


def _to_datetime(match: re.Match[str]) -> datetime:
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, zone = match.group(7), match.group(8)
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    moment = datetime(year, month, day, hour, minute, second, micros, tzinfo=UTC)
    if zone and zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        moment -= sign * offset
    return moment


@functools.lru_cache(maxsize=1024)
def format_timestamp(moment: datetime) -> str:
    """UTC with `Z`; milliseconds, or microseconds when the value has them (lossless).
    Remembered: a task's status timestamp is written out with each write of the task, its
    events and its answers (equal instants read the same, whatever their zone)."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    m = moment
    micros = m.microsecond
    fraction = f"{micros // 1000:03d}" if micros % 1000 == 0 else f"{micros:06d}"
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{fraction}Z"
    )
