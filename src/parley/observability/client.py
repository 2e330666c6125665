"""`ObservedTransport`: a client transport whose every operation is a client span named
after its A2A method (`A2AService/SendMessage`), with the A2A attributes (method, protocol
version, binding, task and context ids); the httpx or gRPC span of its request is its
child. A stream's span lasts until the stream ends, and is current while it reads (the
request goes out on the first read). `observe_clients` puts it in front of every Client's
transport through `parley.client.transport.transport_wrappers`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Tracer

from parley.client.transport import EventStream, Transport
from parley.model import StreamEvent
from parley.observability.handler import SERVICE, ids_of
from parley.observability.instruments import BINDING, GRPC, HTTP_JSON, JSONRPC, METHOD, VERSION
from parley.protocol.errors import A2AError
from parley.protocol.operations import OPERATIONS, Operation


def _method_name(operation: Operation) -> str:
    """The transport's method for an operation: its name in snake_case (`get_task`)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation.value).lower()


_OPERATIONS = {_method_name(operation): operation for operation in Operation}
"""Each operation by its transport method, the names wrapped when a transport is."""
_STREAMS = frozenset(_method_name(spec.operation) for spec in OPERATIONS.values() if spec.streaming)
_BINDINGS = {"JsonRpcTransport": JSONRPC, "RestTransport": HTTP_JSON, "GrpcTransport": GRPC}


def _current(span: Span, *, end: bool) -> Any:
    """`span` made current (ended after, with `end`); failures are described by `_failed`."""
    return trace.use_span(
        span, end_on_exit=end, record_exception=False, set_status_on_exception=False
    )


def _failed(span: Span, error: BaseException) -> None:
    span.record_exception(error)
    name = type(error).__name__ if isinstance(error, A2AError) else "ClientError"
    span.set_status(trace.StatusCode.ERROR, name)


class _ObservedStream:
    """A transport's event stream, read inside its span; the span ends with it."""

    def __init__(self, events: EventStream, span: Span) -> None:
        self._events = events
        self._span = span
        self._open = True
        self._described = False

    @property
    def last_event_id(self) -> str:
        return self._events.last_event_id

    def __aiter__(self) -> _ObservedStream:
        return self

    async def __anext__(self) -> StreamEvent:
        with _current(self._span, end=False):
            try:
                event = await self._events.__anext__()
            except StopAsyncIteration:
                self._end()
                raise
            except BaseException as exc:
                _failed(self._span, exc)
                self._end()
                raise
        if not self._described and self._open:  # a stream's events all name one task
            self._described = True
            self._span.set_attributes(ids_of(event))
        return event

    async def aclose(self) -> None:
        try:
            await self._events.aclose()
        finally:
            self._end()

    def _end(self) -> None:
        if self._open:
            self._open = False
            self._span.end()


class ObservedTransport:
    """`transport`, each operation in a client span; everything else is the transport's."""

    def __init__(self, transport: Transport, tracer: Tracer) -> None:
        self.transport = transport
        self.tracer = tracer
        self.labels = {
            VERSION: transport.version.value,
            BINDING: _BINDINGS.get(type(transport).__name__, type(transport).__name__),
        }
        for name in _OPERATIONS:
            setattr(self, name, self._observed(name, getattr(transport, name)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)

    @property
    def version(self) -> Any:
        return self.transport.version

    def _start(self, name: str, request: object) -> Span:
        operation = _OPERATIONS[name].value
        attributes = {**self.labels, METHOD: operation, **ids_of(request)}
        return self.tracer.start_span(
            f"{SERVICE}/{operation}", kind=trace.SpanKind.CLIENT, attributes=attributes
        )

    def _observed(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        if name in _STREAMS:

            @functools.wraps(method)
            def stream(request: object, options: object) -> EventStream:
                span = self._start(name, request)
                return _ObservedStream(method(request, options), span)

            return stream

        @functools.wraps(method)
        async def unary(request: object, options: object) -> Any:
            span = self._start(name, request)
            with _current(span, end=True):
                try:
                    result = await method(request, options)
                except BaseException as exc:
                    _failed(span, exc)
                    raise
                span.set_attributes(ids_of(result))
                return result

        return unary

    async def aclose(self) -> None:
        await self.transport.aclose()


def wrapper(tracer: Tracer) -> Callable[[Transport], Transport]:
    """What `observe_clients` puts into `transport_wrappers`."""

    def observe(transport: Transport) -> Transport:
        if isinstance(transport, ObservedTransport):
            return transport
        observed: Transport = ObservedTransport(transport, tracer)
        return observed

    return observe
