"""Checks of authentication on one interface, when the card requires it: a call without
the credentials is refused with 401 and names its scheme in a challenge (REFERENCE R-SEC,
R-ERR)."""

from __future__ import annotations

import uuid

from parley.client.card import GRPC_BINDING
from parley.conformance.context import InterfaceContext, describe
from parley.conformance.exchange import Answer
from parley.conformance.results import CheckFailedError, CheckSkippedError, Level, Registry
from parley.model import GetTaskRequest
from parley.protocol.operations import Operation

checks = Registry()

UNAUTHORIZED = 401


async def _anonymous(context: InterfaceContext) -> Answer:
    if not context.card.security_requirements:
        raise CheckSkippedError("the card requires no authentication")
    request = GetTaskRequest(id=f"parley-check-{uuid.uuid4().hex}")
    return await context.subject.call(Operation.GET_TASK, request)


@checks.interface("auth.required", "R-SEC-4", Level.MUST, "a call without credentials is refused")
async def auth_required(context: InterfaceContext) -> str:
    answer = await _anonymous(context)
    refused = context.subject.unauthenticated(answer)
    if refused is None:
        raise CheckFailedError(f"expected an unauthenticated refusal, got {describe(answer)}")
    return refused


@checks.interface("auth.challenge", "R-SEC-6", Level.SHOULD, "the refusal carries a challenge")
async def auth_challenge(context: InterfaceContext) -> str:
    if context.subject.binding == GRPC_BINDING:
        raise CheckSkippedError("gRPC has no WWW-Authenticate challenge")
    answer = await _anonymous(context)
    challenge = answer.headers.get("www-authenticate")
    if answer.status != UNAUTHORIZED or not challenge:
        raise CheckFailedError(f"no WWW-Authenticate challenge: {describe(answer)}")
    return f"WWW-Authenticate: {challenge}"
