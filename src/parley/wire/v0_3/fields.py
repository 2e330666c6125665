"""Field checks of the 0.3 decoders: required and optional values, `kind`, free-form
objects, and the path of an error raised inside a nested object or list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from parley.model import JSONObject
from parley.wire import reader
from parley.wire.limits import active
from parley.wire.reader import check_depth, fail

T = TypeVar("T")
Obj = dict[str, Any]


def nested(value: Any, decoder: Callable[[Any], T], name: str) -> T:
    """A nested object; errors inside it are named `name.<field>` (`reader.nested`)."""
    return reader.nested(name, decoder, value)


def items(value: Any, decoder: Callable[[Any], T], name: str) -> tuple[T, ...]:
    """An optional list of objects (absent = empty); errors are named `name[i].<field>`."""
    return reader.listed(name, decoder, value)


def obj(value: Any) -> Obj:
    """The value as a JSON object (the error names no field: the caller prefixes it)."""
    if type(value) is dict:
        return value
    fail("", "", "is required" if value is None else "expected a JSON object")


def required_items(value: Any, decoder: Callable[[Any], T], name: str) -> tuple[T, ...]:
    """A required list of objects (may be empty)."""
    if value is None:
        fail("", name, "is required")
    return items(value, decoder, name)


def text(d: Obj, key: str) -> str:
    """A required string that may be empty."""
    value = d.get(key)
    if type(value) is str:
        return value
    fail("", key, "is required" if value is None else "expected a string")


def ident(d: Obj, key: str) -> str:
    """A required, non-empty string (ids, names, URLs)."""
    value = d.get(key)
    if type(value) is str and value:
        return value
    fail("", key, "is required" if value in (None, "") else "expected a string")


def optional_text(value: Any, key: str) -> str:
    """An optional string; absent or null is empty."""
    if value is None:
        return ""
    if type(value) is str:
        return value
    fail("", key, "expected a string")


def strings(value: Any, key: str) -> tuple[str, ...]:
    """An optional list of strings; absent or null is empty."""
    if value is None:
        return ()
    if type(value) is list and all(type(item) is str for item in value):
        return tuple(value)
    fail("", key, "expected a list of strings")


def required_strings(d: Obj, key: str) -> tuple[str, ...]:
    """A required list of strings (may be empty)."""
    value = d.get(key)
    if value is None:
        fail("", key, "is required")
    return strings(value, key)


def flag(value: Any, key: str) -> bool:
    """An optional boolean; absent or null is false."""
    if value is None or value is False:
        return False
    if value is True:
        return True
    fail("", key, "expected true or false")


def metadata(value: Any, key: str = "metadata") -> JSONObject:
    """A present free-form object (metadata, params, header), depth-checked."""
    if type(value) is not dict:
        fail("", key, "expected a JSON object")
    if not shallow_enough(value, 1):
        check_depth(value, key)  # raises, naming the field
    return value


def shallow_enough(value: dict[str, Any] | list[Any], depth: int) -> bool:
    """Whether free-form JSON at `depth` nests no deeper than the limit. Recursive, but
    never deeper than the limit (the reader's iterative check is slower; it names errors)."""
    limit = active().max_value_depth
    for child in value.values() if type(value) is dict else value:
        if (type(child) is dict or type(child) is list) and (
            depth >= limit or not shallow_enough(child, depth + 1)
        ):
            return False
    return True


def optional_metadata(value: Any, key: str = "metadata") -> JSONObject | None:
    return None if value is None else metadata(value, key)


def kind_error(value: Any, expected: str) -> NoReturn:
    """The error for a missing, unknown or non-object `kind`d value."""
    if type(value) is not dict:
        fail("", "", "is required" if value is None else "expected a JSON object")
    kind = value.get("kind")
    if kind is None:
        fail("", "kind", "is required")
    fail("", "kind", f"expected {expected}")
