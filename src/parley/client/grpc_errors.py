"""The gRPC transport's one translation point for failures: a call's status, with the
`google.rpc.ErrorInfo` (and `BadRequest`) of its `grpc-status-details-bin` trailer, back
into the error the server raised; anything else into the client's own errors.

How an A2A error is recognised: by its ErrorInfo reason (the v1.0.1 table, Parley in
either version), or by the `<ErrorClass>: <message>` form of the status message (the
official SDK's 0.3 servers send no details); that prefix is not part of the message.
Without either, the status is the transport's: `UNAVAILABLE` and `CANCELLED` (the call
ended before its answer) are ClientConnectionError, `DEADLINE_EXCEEDED`
ClientTimeoutError, a bare `UNIMPLEMENTED` (gRPC's answer for a method the server lacks)
MethodNotFoundError, the rest ClientProtocolError.
"""

from __future__ import annotations

import re
from typing import Any

try:
    import grpc
    from google.protobuf import any_pb2
    from google.protobuf.message import DecodeError
    from google.rpc import error_details_pb2, status_pb2
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("gRPC needs the grpc extra: pip install 'parley-a2a[grpc]'") from exc

from parley.client.errors import ClientConnectionError, ClientProtocolError, ClientTimeoutError
from parley.protocol.errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    MethodNotFoundError,
)
from parley.wire.errors import (
    BAD_REQUEST_TYPE,
    BY_REASON,
    ERROR_INFO_TYPE,
    ERROR_TABLE,
    from_details,
)

DETAILS_KEY = "grpc-status-details-bin"

_NAMED = re.compile(r"([A-Z]\w*Error): (.*)", re.DOTALL)
_BY_NAME: dict[str, type[A2AError]] = {cls.__name__: cls for cls in ERROR_TABLE}
_BY_NAME["AuthenticatedExtendedCardNotConfiguredError"] = ExtendedAgentCardNotConfiguredError
"""Error class names as 0.3 servers spell them (the 0.3 SDK's name for the card error)."""

_DROPPED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)


def _detail(packed: Any) -> dict[str, Any] | None:
    """An ErrorInfo or BadRequest as the ProtoJSON dict `parley.wire.errors` reads."""
    if packed.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
        info = error_details_pb2.ErrorInfo()
        packed.Unpack(info)
        return {"@type": ERROR_INFO_TYPE, "reason": info.reason, "metadata": dict(info.metadata)}
    if packed.Is(error_details_pb2.BadRequest.DESCRIPTOR):
        bad = error_details_pb2.BadRequest()
        packed.Unpack(bad)
        violations = [
            {"field": v.field, "description": v.description} for v in bad.field_violations
        ]
        return {"@type": BAD_REQUEST_TYPE, "fieldViolations": violations}
    return None


def details_of(error: grpc.aio.AioRpcError) -> list[dict[str, Any]]:
    """The ErrorInfo and BadRequest details of a failed call (other details, and a
    trailer that does not parse, are ignored)."""
    for key, value in error.trailing_metadata() or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            try:
                status = status_pb2.Status.FromString(value)
            except DecodeError:
                return []
            packed: list[any_pb2.Any] = list(status.details)
            return [item for item in map(_detail, packed) if item is not None]
    return []


def _known_reason(items: list[dict[str, Any]]) -> bool:
    return any(i["@type"] == ERROR_INFO_TYPE and i["reason"] in BY_REASON for i in items)


def error_of(error: grpc.aio.AioRpcError, what: str, timeout: float | None) -> Exception:
    """The exception a failed call raises: the server's A2A error, or a client error
    (`what` names the call, `timeout` its deadline)."""
    code = error.code()
    message = error.details() or ""
    items = details_of(error)
    named = _NAMED.fullmatch(message)
    cls: type[A2AError] | None = None
    if named is not None and named.group(1) in _BY_NAME:
        cls, message = _BY_NAME[named.group(1)], named.group(2)
    if cls is not None or _known_reason(items):
        return from_details(cls or InternalError, message, items)
    if code in _DROPPED:
        return ClientConnectionError(f"{what}: gRPC {code.name}: {message}")
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return ClientTimeoutError(f"{what}: no answer within {timeout} s")
    if code is grpc.StatusCode.UNIMPLEMENTED:
        return MethodNotFoundError(f"{what}: {message}" if message else None)
    return ClientProtocolError(f"{what}: gRPC {code.name}: {message or '(no details)'}")
