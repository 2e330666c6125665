"""What both HTTP bindings share around a handler call: the app's settings, version and
extension negotiation, the CallContext (with the `Last-Event-ID` resume point), and turning
any failure into a protocol error.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence

import msgspec

from parley.asgi.http import Exchange, Request
from parley.model import Model, StreamEvent
from parley.protocol.errors import (
    A2AError,
    InternalError,
    PermissionDeniedError,
    RateLimitedError,
    UnauthenticatedError,
    VersionNotSupportedError,
)
from parley.protocol.negotiation import (
    EXTENSIONS_HEADERS,
    AskedVersion,
    Version,
    activate_extensions,
    ask_version,
    parse_extensions,
    released_form,
)
from parley.protocol.operations import Operation
from parley.protocol.validation import check_ids
from parley.server.auth.certificates import tls_client_certificate
from parley.server.context import (
    ANONYMOUS_AUTHENTICATOR,
    ANONYMOUS_CALLER,
    Authenticator,
    AuthRequest,
    CallContext,
    Caller,
)
from parley.server.handler import RequestHandler, StreamCall
from parley.server.quotas import Allowance, RateLimiter
from parley.wire.errors import ERROR_TABLE, ErrorTable, spec_of
from parley.wire.json_bytes import JSON
from parley.wire.limits import Limits

logger = logging.getLogger("parley.asgi")

LAST_EVENT_ID = "last-event-id"
_MAX_DIGITS = 18
"""A sequence number fits a signed 64-bit store column."""


class Settings(msgspec.Struct, frozen=True):
    """Everything `build_app` was given."""

    handler: RequestHandler
    limits: Limits
    authenticator: Authenticator
    keepalive_seconds: float
    served: tuple[Version, ...]
    rate_limiter: RateLimiter | None = None
    errors: ErrorTable = msgspec.field(default_factory=lambda: ERROR_TABLE)
    """The 1.0 error statuses the app emits (`parley.wire.errors.WIRE_COMPAT`)."""


def to_a2a_error(exc: BaseException, where: str) -> A2AError:
    """A protocol error as is; anything else is logged and becomes a bare InternalError
    (the traceback never reaches the client)."""
    if isinstance(exc, A2AError):
        return exc
    logger.error("Unexpected error in %s", where, exc_info=exc)
    return InternalError()


def answer_version(request: Request, served: Sequence[Version]) -> Version:
    """The version to answer a request in before its own is known (`ask_version`)."""
    return ask_version(request.version_header, served).answer


def require_version(asked: AskedVersion, version: Version) -> Version:
    """The request's `A2A-Version` (absent = 0.3; `asked`, parsed once) must name
    `version`, the version its method or route belongs to (REFERENCE §1.2, §1.3), or a draft
    that shares its methods (`released_form`): the version asked for."""
    if asked.asked is version:  # the usual: the method's own version, asked for
        return version
    named = asked.required()
    if released_form(named) is not version:
        raise VersionNotSupportedError(
            f"This method belongs to A2A {version.value}, but the request asks for "
            f"A2A {named.value} (A2A-Version {asked.text!r})",
            metadata={"requestedVersion": asked.text[:64] or named.value},
        )
    return named


_EXTENSION_HEADER_NAMES = tuple(dict.fromkeys(n.lower() for n in EXTENSIONS_HEADERS.values()))
_EXTENSIONS_NOW, _EXTENSIONS_0_3 = _EXTENSION_HEADER_NAMES
"""The two names, each looked for once per call (an unpacking: there are two)."""


def requested_extensions(request: Request) -> tuple[str, ...]:
    """Extension URIs from both header names (a dual server reads both, REFERENCE §1.4)."""
    headers = request.headers
    values = [value for name in _EXTENSION_HEADER_NAMES if (value := headers.get(name))]
    return parse_extensions(values) if values else ()


def resume_point(request: Request) -> int | None:
    """The sequence number a client resumes after (`Last-Event-ID`, DESIGN 5); a value
    that is not a plain decimal number is ignored, and the stream starts as the spec says."""
    value = request.headers.get(LAST_EVENT_ID)
    if value is None:
        return None
    value = value.strip()
    if not (0 < len(value) <= _MAX_DIGITS and value.isascii() and value.isdigit()):
        return None
    return int(value)


async def authenticate(settings: Settings, exchange: Exchange) -> Caller:
    """The caller, before anything of the request is read (a caller without credentials
    learns nothing about its request's validity); an authenticator that fails otherwise
    than by refusing is an InternalError."""
    if settings.authenticator is ANONYMOUS_AUTHENTICATOR:  # no security: nothing to read
        return ANONYMOUS_CALLER
    request = exchange.request
    auth = AuthRequest(
        transport="http",
        method=request.method,
        path=request.path,
        headers=request.headers,
        query=request.query,
        peer_certificate=tls_client_certificate(exchange.scope),
        client=request.client,
    )
    try:
        return await settings.authenticator.authenticate(auth)
    except UnauthenticatedError:
        if settings.rate_limiter is not None:  # guessing credentials is rate-limited too
            await settings.rate_limiter.refused(request.client)
        raise
    except PermissionDeniedError:
        raise
    except Exception as exc:
        raise to_a2a_error(exc, "the authenticator") from None


def error_headers(error: A2AError) -> list[tuple[str, str]]:
    """`WWW-Authenticate` with the accepted schemes' challenges on a 401 (RFC 9110 §11.6.1);
    `Retry-After` (RFC 9110 §10.2.3) and the exhausted limit's `X-RateLimit-*` on a 429."""
    if isinstance(error, UnauthenticatedError) and error.challenges:
        return [("WWW-Authenticate", ", ".join(error.challenges))]
    if isinstance(error, RateLimitedError):
        headers = [] if error.retry_after is None else [("Retry-After", str(error.retry_after))]
        if error.limit is not None and error.reset is not None:
            headers.extend(quota_headers(Allowance(error.limit, 0, error.reset)))
        return headers
    return []


def quota_headers(allowance: Allowance) -> list[tuple[str, str]]:
    """The caller's rate limit: requests per window, left in it, and its end (Unix time)."""
    return [
        ("X-RateLimit-Limit", str(allowance.limit)),
        ("X-RateLimit-Remaining", str(allowance.remaining)),
        ("X-RateLimit-Reset", str(allowance.reset)),
    ]


def jsonrpc_status(error: A2AError) -> int:
    """A JSON-RPC error's HTTP status: 200, but for a call refused before it became one
    (401 / 403 for credentials, 429 for a rate limit: REFERENCE §6.3, RFC 6585)."""
    if isinstance(error, UnauthenticatedError | PermissionDeniedError | RateLimitedError):
        return spec_of(error).http_status
    return 200


def call_context(
    settings: Settings,
    request: Request,
    version: Version,
    *,
    decode: Callable[[Operation, JSON], Model],
    operation: Operation,
    payload: JSON,
    caller: Caller,
    quota: Allowance | None,
) -> tuple[CallContext, Model]:
    """Negotiate extensions, decode the request (`decode(operation, payload)`), check its
    ids (`check_ids`: the same bound for every store) and build the call's context, whose
    tenant is the decoded request's; `quota` is what `admit` left of the caller's rate
    limit. Activated extensions: requested and declared by the card (R-EXT-3); a declared
    `required` one not requested raises ExtensionSupportRequiredError (R-CAP-2)."""
    headers = request.headers
    requested = (
        requested_extensions(request)
        if _EXTENSIONS_NOW in headers or _EXTENSIONS_0_3 in headers
        else ()
    )
    declared = settings.handler.card.capabilities.extensions
    activated = activate_extensions(declared, requested) if declared else ()
    model_request = decode(operation, payload)
    check_ids(model_request)
    ctx = CallContext(
        caller=caller,
        tenant=getattr(model_request, "tenant", ""),
        version=version,
        requested_extensions=requested,
        activated_extensions=activated,
        headers=headers,
        resume_after=resume_point(request) if LAST_EVENT_ID in headers else None,
        client=request.client,
        quota=quota,
    )
    return ctx, model_request


async def admit(
    settings: Settings, caller: Caller, request: Request, operation: Operation
) -> Allowance | None:
    """Count the call against the caller's rate limits (`parley.server.quotas`): what is
    left of them (None: no rate applies); RateLimitedError past them. Awaited only where
    the app has a rate limiter."""
    limiter = settings.rate_limiter
    return None if limiter is None else await limiter.admit(caller, request.client, operation)


def echo_headers(ctx: CallContext) -> Sequence[tuple[str, str]]:
    """The activated extensions, echoed under the version's header name (REFERENCE §1.4),
    and what is left of the caller's rate limit (usually neither: the shared `()`, which
    a stream holds for free)."""
    if not ctx.activated_extensions and ctx.quota is None:
        return ()
    headers = []
    if ctx.activated_extensions:
        headers.append((EXTENSIONS_HEADERS[ctx.version], ", ".join(ctx.activated_extensions)))
    if ctx.quota is not None:
        headers.extend(quota_headers(ctx.quota))
    return headers


def open_stream(
    handler: RequestHandler, call: StreamCall, ctx: CallContext, request: Model
) -> AsyncIterator[StreamEvent]:
    """The handler's event iterator (nothing runs until its first `__anext__`)."""
    try:
        return call.call(handler, ctx, request)
    except Exception as exc:
        raise to_a2a_error(exc, call.spec.operation.value) from None
