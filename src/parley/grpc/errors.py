"""The gRPC binding's one translation point for failures: any exception becomes an
A2AError, and an A2AError becomes a gRPC status whose `grpc-status-details-bin` trailer
carries a `google.rpc.Status` with the error's `google.rpc.ErrorInfo` (reason, domain,
metadata) and, when fields are named, a `google.rpc.BadRequest`.
"""

from __future__ import annotations

import logging

import grpc
from google.protobuf import any_pb2, json_format
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from parley.protocol.errors import A2AError, InternalError
from parley.protocol.negotiation import Version
from parley.wire.errors import grpc_status

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


def status_of(error: A2AError, version: Version) -> grpc.Status:
    """The gRPC status of an error in one version (codes and messages: `parley.wire.errors`)."""
    name, message, details = grpc_status(error, version)
    code = grpc.StatusCode[name]
    status = status_pb2.Status(code=code.value[0], message=message)
    for detail in details:
        packed = any_pb2.Any()
        json_format.ParseDict(detail, packed)
        status.details.append(packed)
    result: grpc.Status = rpc_status.to_status(status)
    return result
