"""Checks of the error objects themselves on one 1.0 interface: every `details` element
is typed with `@type` (JSON-RPC: each object of an `error.data` list), and an HTTP+JSON A2A
error's ErrorInfo names the A2A domain (REFERENCE R-ERR-17, R-ERR-24, R-REST-8). gRPC
details are `Any` messages, typed by construction; 0.3 defined no details."""

from __future__ import annotations

import uuid

from parley.client.card import GRPC_BINDING, JSONRPC_BINDING
from parley.conformance.context import InterfaceContext, describe
from parley.conformance.results import CheckFailedError, CheckSkippedError, Level, Registry
from parley.model import GetTaskRequest
from parley.protocol.negotiation import DEFAULT_VERSION
from parley.protocol.operations import Operation
from parley.wire.errors import ERROR_INFO_TYPE

checks = Registry()

A2A_DOMAIN = "a2a-protocol.org"


@checks.interface(
    "error.details-typed", "R-ERR-17", Level.MUST, "every error detail carries its @type"
)
async def details_typed(context: InterfaceContext) -> str:
    subject = context.subject
    if subject.binding == GRPC_BINDING:
        raise CheckSkippedError("gRPC details are typed Any messages")
    if subject.version is DEFAULT_VERSION:
        raise CheckSkippedError(f"{DEFAULT_VERSION.value} defines no error details")
    request = GetTaskRequest(id=f"parley-check-missing-{uuid.uuid4().hex}")
    answer = await context.call(Operation.GET_TASK, request)
    error = answer.error
    if subject.binding == JSONRPC_BINDING:
        details = error.get("data") if isinstance(error, dict) else None
        if not isinstance(details, list):
            return "no details (error.data is not a list of details)"
    else:
        inner = error.get("error") if isinstance(error, dict) else None
        details = inner.get("details") if isinstance(inner, dict) else None
        if not isinstance(details, list):
            raise CheckFailedError(f"the error has no details list (R-ERR-24): {describe(answer)}")
    untyped = [d for d in details if not isinstance(d, dict) or not isinstance(d.get("@type"), str)]
    if untyped:
        raise CheckFailedError(
            f"{len(untyped)} of {len(details)} details lack @type: {untyped!r}"[:200]
        )
    infos = [d for d in details if d.get("@type") == ERROR_INFO_TYPE]
    if subject.binding != JSONRPC_BINDING:
        if not infos:
            raise CheckFailedError("no ErrorInfo among the details (R-ERR-24)")
        if infos[0].get("domain") != A2A_DOMAIN:
            raise CheckFailedError(
                f"the ErrorInfo's domain is {infos[0].get('domain')!r}, not {A2A_DOMAIN}"
            )
    return f"{len(details)} typed details, {len(infos)} ErrorInfo"
