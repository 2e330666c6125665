"""What a scenario's outcome becomes before bindings are compared: every model object as
its type and fields, errors as class, message, metadata, field violations and data; only
what differs per run is normalised — ids (UUIDs, anywhere in a string, and page tokens)
become `<id0>`, `<id1>`, … by order of first appearance, timestamps `<time>`."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import msgspec

from parley.client import Reconnected
from parley.protocol.errors import A2AError

UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")
OPAQUE_FIELDS = frozenset({"next_page_token"})
"""Fields whose value is generated per run as a whole (a page token encodes ids)."""


class Normaliser:
    """One binding's run: ids are numbered in the order this run first met them."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def _id(self, value: str) -> str:
        return self.ids.setdefault(value, f"<id{len(self.ids)}>")

    def text(self, value: str) -> str:
        return UUID.sub(lambda match: self._id(match.group(0)), value)

    def __call__(self, value: Any) -> Any:  # noqa: PLR0911 - one case per kind of value
        if isinstance(value, A2AError):
            return {
                "<error>": type(value).__name__,
                "message": self(value.message),
                "metadata": self(dict(value.metadata)),
                "field_violations": self(value.field_violations),
                "data": self(value.data),
            }
        if isinstance(value, Reconnected):
            return {"<reconnected>": self(value.task)}
        if isinstance(value, msgspec.Struct):
            fields: dict[str, Any] = {"<kind>": type(value).__name__}
            for name in value.__struct_fields__:
                field = getattr(value, name)
                opaque = name in OPAQUE_FIELDS and isinstance(field, str) and field
                fields[name] = self._id(field) if opaque else self(field)
            return fields
        if isinstance(value, datetime):
            return "<time>"
        if isinstance(value, enum.Enum):
            return value.name
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(item) for item in value]
        return value


def kind(outcome: Any) -> str:
    """What an outcome is: a model type's name, an error class's, `list`, or `None`."""
    if isinstance(outcome, dict):
        return str(outcome.get("<kind>") or outcome.get("<error>"))
    return type(outcome).__name__ if outcome is not None else "None"


def brief(value: Any) -> str:
    """A value in a difference: model objects and errors by their type's name only."""
    if isinstance(value, dict):
        if "<kind>" in value or "<error>" in value:
            return f"<{kind(value)}>"
        return "{" + ", ".join(f"{k}: {brief(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(brief(item) for item in value) + "]"
    return repr(value)


def differences(left: Any, right: Any, path: str = "") -> Iterator[str]:
    """Every path at which two outcomes differ, with both values (`brief`)."""
    if isinstance(left, dict) and isinstance(right, dict):
        for name in sorted({*left, *right}):  # the order of keys is no difference
            yield from differences(left.get(name), right.get(name), f"{path}.{name}")
    elif isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            yield from differences(a, b, f"{path}[{index}]")
    elif left != right:
        yield f"{path or '.'}: {brief(left)} != {brief(right)}"
