"""Bytes to JSON and back (orjson), with the size and depth limits applied.

The only place that calls the JSON library: decoders receive parsed values.
"""

from __future__ import annotations

from typing import Any

import orjson

from parley.protocol.errors import InternalError, InvalidRequestError, JSONParseError
from parley.wire.limits import DEFAULT_LIMITS, Limits

JSON = Any
"""A parsed JSON value at the wire edge (the only place `Any` is allowed)."""


def loads(raw: bytes | str, limits: Limits = DEFAULT_LIMITS) -> JSON:
    """Parse one JSON document: InvalidRequestError if too big, JSONParseError if malformed
    or nested too deeply (past orjson's 1,024 levels)."""
    if len(raw) > limits.max_body_bytes:
        raise too_large(len(raw), limits)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        reason = str(exc).split(":", 1)[0]
        if "depth" in reason:
            reason = "JSON nested too deeply"
        raise JSONParseError(f"Invalid JSON payload: {reason}") from None


def too_large(size: int, limits: Limits) -> InvalidRequestError:
    """The error for a body over the size limit (also raised while a body streams in)."""
    return InvalidRequestError(
        f"Request body of {size} bytes exceeds the limit of {limits.max_body_bytes} bytes",
        metadata={"limit": str(limits.max_body_bytes)},
    )


def fragment(text: str | bytes) -> JSON:
    """JSON already serialized, which `dumps` writes out as it is (neither parsed nor
    checked: only for text this process serialized itself)."""
    return orjson.Fragment(text)


def dumps(value: JSON) -> bytes:
    """Serialize a JSON value compactly (UTF-8)."""
    try:
        return orjson.dumps(value)
    except TypeError as exc:  # orjson.JSONEncodeError subclasses TypeError
        raise InternalError(f"Unserializable response: {exc}") from None
