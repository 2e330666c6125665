"""The base of every model object: an immutable, typed struct; and the JSON value alias.

Imports only msgspec (the one data library the core allows); knows nothing of wire names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

if TYPE_CHECKING:
    JSONValue: TypeAlias = (
        "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
    )
else:  # the recursive alias is for the type checker; at run time it stays opaque
    JSONValue = Any
"""Any JSON value: the content of `metadata`, `DataPart.data`, extension params."""

JSONObject: TypeAlias = Mapping[str, JSONValue]
"""A JSON object (protobuf `Struct`)."""


class Model(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Base class of all canonical model objects: frozen, keyword-only, compared by value.

    Not tracked by the garbage collector (`gc=False`): immutable objects built bottom-up
    cannot form reference cycles, and a server holding many tasks would otherwise pay
    for scanning them in every full collection.
    """
