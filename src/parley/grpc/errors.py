"""The gRPC binding's one translation point for failures: any exception becomes an
A2AError, and an A2AError becomes a gRPC status whose `grpc-status-details-bin` trailer
carries a `google.rpc.Status` with the error's `google.rpc.ErrorInfo` (reason, domain,
metadata) and, when fields are named, a `google.rpc.BadRequest`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2, json_format
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from parley.protocol.errors import A2AError, InternalError, RateLimitedError
from parley.protocol.negotiation import Version
from parley.server.quotas import Allowance, quota_metadata
from parley.wire.errors import ERROR_TABLE, ErrorTable, grpc_status

logger = logging.getLogger("parley.grpc")

_DETAIL_TYPES = (error_details_pb2.ErrorInfo, error_details_pb2.BadRequest)
"""The google.rpc detail messages our errors carry (imported: ProtoJSON `@type` needs them)."""


def to_a2a_error(exc: BaseException, where: str) -> A2AError:
    """A protocol error as is; anything else is logged and becomes a bare InternalError
    (the traceback never reaches the client)."""
    if isinstance(exc, A2AError):
        return exc
    logger.error("Unexpected error in %s", where, exc_info=exc)
    return InternalError()


def status_of(error: A2AError, version: Version, table: ErrorTable = ERROR_TABLE) -> grpc.Status:
    """The gRPC status of an error in one version (codes and messages: `parley.wire.errors`,
    in `table`)."""
    name, message, details = grpc_status(error, version, table)
    code = grpc.StatusCode[name]
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in details:
        packed = any_pb2.Any()
        json_format.ParseDict(detail, packed)
        status.details.append(packed)
    result: grpc.Status = rpc_status.to_status(status)
    if isinstance(error, RateLimitedError):  # the HTTP bindings' headers, as trailers
        extra = [] if error.retry_after is None else [("retry-after", str(error.retry_after))]
        if error.limit is not None and error.reset is not None:
            extra.extend(quota_metadata(Allowance(error.limit, 0, error.reset)))
        result = _Status(result.code, result.details, (*result.trailing_metadata, *extra))
    return result


@dataclass(frozen=True, slots=True)
class _Status(grpc.Status):
    """A status with trailing metadata beside its details (grpc.Status is an interface)."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]
