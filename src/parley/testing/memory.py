"""`InMemoryTransport`: a client `Transport` straight onto a `RequestHandler` — no HTTP, no
codec — for users' own tests. It behaves like the wire transports: a `CallContext` per call
(version, caller from the headers, extensions activated against the card, resume point),
the request's ids checked, the same error classes, the same streams, timeouts and idle limits.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

from parley.client.auth import Auth
from parley.client.errors import ClientTimeoutError, StreamIdleError
from parley.client.transport import BaseTransport, CallOptions, EventStream
from parley.model import Model, StreamEvent
from parley.protocol.errors import A2AError, InternalError, MethodNotFoundError
from parley.protocol.negotiation import (
    EXTENSIONS_HEADERS,
    VERSION_HEADER,
    Version,
    activate_extensions,
)
from parley.protocol.operations import OPERATIONS, Operation
from parley.protocol.validation import check_ids
from parley.server.context import Authenticator, AuthRequest, CallContext, authenticator_of
from parley.server.handler import STREAMING, UNARY, RequestHandler
from parley.server.quotas import rate_limiter_of


def _protocol_error(exc: Exception) -> A2AError:
    """What a binding makes of a handler's failure: protocol errors as they are, anything
    else a bare InternalError."""
    return exc if isinstance(exc, A2AError) else InternalError()


def _resume_point(last_event_id: str) -> int | None:
    value = last_event_id.strip()
    return int(value) if value.isdecimal() else None


class InMemoryTransport(BaseTransport):
    """Calls `handler` directly, as a client of protocol `version` would reach it.

    `auth` adds its headers to each call and `authenticator` turns them into the caller,
    as a server's authenticator would (default: the handler's own, as a binding's).
    """

    def __init__(
        self,
        handler: RequestHandler,
        *,
        version: Version = Version.V1_0,
        auth: Auth | None = None,
        authenticator: Authenticator | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.handler = handler
        self._version = version
        self.auth = auth
        self.authenticator = authenticator_of(handler, authenticator)
        self.headers = dict(headers or {})

    @property
    def version(self) -> Version:
        return self._version

    async def _headers(self, options: CallOptions) -> dict[str, str]:
        headers = {VERSION_HEADER: self._version.value, **self.headers, **options.headers}
        if options.extensions:
            headers[EXTENSIONS_HEADERS[self._version]] = ", ".join(options.extensions)
        if self.auth is not None:
            headers.update(await self.auth.headers())
        return {name.lower(): value for name, value in headers.items()}

    async def context(
        self, operation: Operation, request: Model, options: CallOptions
    ) -> CallContext:
        """The CallContext a binding would build for this call, the request's ids checked
        as a binding checks them."""
        if self._version not in OPERATIONS[operation].bindings:
            raise MethodNotFoundError(
                f"{operation.value} does not exist in A2A {self._version.value}",
                metadata={"method": operation.value},
            )
        headers = await self._headers(options)
        try:
            auth = AuthRequest("memory", "POST", operation.value, headers)
            caller = await self.authenticator.authenticate(auth)
        except Exception as exc:
            raise _protocol_error(exc) from None
        limiter = rate_limiter_of(self.handler)
        quota = None if limiter is None else await limiter.admit(caller, None, operation)
        check_ids(request)
        declared = self.handler.card.capabilities.extensions
        return CallContext(
            caller=caller,
            tenant=getattr(request, "tenant", ""),
            version=self._version,
            requested_extensions=options.extensions,
            activated_extensions=activate_extensions(declared, options.extensions),
            headers=headers,
            resume_after=_resume_point(options.last_event_id),
            quota=quota,
        )

    async def unary(self, operation: Operation, request: Model, options: CallOptions) -> Any:
        ctx = await self.context(operation, request, options)
        call = UNARY[operation].call
        deadline = asyncio.timeout(options.timeout)
        try:
            async with deadline:
                return await call(self.handler, ctx, request)
        except TimeoutError as exc:
            if not deadline.expired():
                raise InternalError() from None
            raise ClientTimeoutError(
                f"{operation.value}: no answer within {options.timeout} s"
            ) from exc
        except Exception as exc:
            raise _protocol_error(exc) from None

    def stream(self, operation: Operation, request: Model, options: CallOptions) -> EventStream:
        return HandlerEventStream(self, operation, request, options)

    async def aclose(self) -> None:
        return None


class HandlerEventStream:
    """An EventStream over a handler's event iterator; the SSE id of an event is the
    sequence number the iterator tells (when it does)."""

    def __init__(
        self,
        transport: InMemoryTransport,
        operation: Operation,
        request: Model,
        options: CallOptions,
    ) -> None:
        self._transport = transport
        self._operation = operation
        self._request = request
        self._options = options
        self._events: AsyncIterator[StreamEvent] | None = None
        self._closed = False
        self._last_event_id = ""

    @property
    def last_event_id(self) -> str:
        return self._last_event_id

    def __aiter__(self) -> HandlerEventStream:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._closed:
            raise StopAsyncIteration
        try:
            if self._events is None:
                self._events = await self._open()
            event = await self._next(self._events)
        except BaseException:
            await self.aclose()
            raise
        sequence = getattr(self._events, "sequence", None)
        self._last_event_id = "" if sequence is None else str(sequence)
        return event

    async def _open(self) -> AsyncIterator[StreamEvent]:
        ctx = await self._transport.context(self._operation, self._request, self._options)
        call = STREAMING[self._operation].call
        try:
            events = call(self._transport.handler, ctx, self._request)
        except Exception as exc:
            raise _protocol_error(exc) from None
        return events

    async def _next(self, events: AsyncIterator[StreamEvent]) -> StreamEvent:
        idle = asyncio.timeout(self._options.idle_timeout)
        try:
            async with idle:
                return await anext(events)
        except StopAsyncIteration:
            raise
        except TimeoutError as exc:
            if not idle.expired():
                raise InternalError() from None
            limit = self._options.idle_timeout
            raise StreamIdleError(f"{self._operation.value}: nothing for {limit} s") from exc
        except Exception as exc:
            raise _protocol_error(exc) from None

    async def aclose(self) -> None:
        self._closed = True
        events, self._events = self._events, None
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
