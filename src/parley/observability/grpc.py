"""`ObservedInterceptor`: a `grpc.aio` server interceptor that opens the server span of each
call (RPC semantic conventions, parent taken from the `traceparent` / `tracestate`
metadata) and tells the handler wrapper the call arrived over gRPC.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from opentelemetry import propagate, trace

from parley.observability.instruments import GRPC, arrived_on
from parley.observability.providers import Telemetry

Behaviour = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]


def _metadata(details: grpc.HandlerCallDetails) -> dict[str, str]:
    return {
        key.lower(): value
        for key, value in details.invocation_metadata or ()
        if isinstance(value, str)
    }


class ObservedInterceptor(grpc.aio.ServerInterceptor):
    """Each unary and server-streaming call (what A2A has) in a server span."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        traced = self._traced(handler_call_details)
        codec = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }
        unary: Any = handler.unary_unary
        streaming: Any = handler.unary_stream  # A2A's streams write with `context.write`
        if unary is not None:
            return grpc.unary_unary_rpc_method_handler(traced(unary), **codec)
        if streaming is not None:
            return grpc.unary_stream_rpc_method_handler(traced(streaming), **codec)
        return handler

    def _traced(self, details: grpc.HandlerCallDetails) -> Callable[[Behaviour], Behaviour]:
        full = details.method or ""
        service, _, method = full.lstrip("/").rpartition("/")
        attributes = {"rpc.system": "grpc", "rpc.service": service, "rpc.method": method}
        tracer = self.telemetry.tracer

        def wrap(behaviour: Behaviour) -> Behaviour:
            async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                parent = propagate.extract(_metadata(details))
                token = arrived_on.set(GRPC)
                span = tracer.start_span(
                    full.lstrip("/"), parent, trace.SpanKind.SERVER, attributes
                )
                try:
                    with trace.use_span(span, end_on_exit=True):
                        try:
                            return await behaviour(request, context)
                        finally:
                            _record_code(span, context)
                finally:
                    arrived_on.reset(token)

            return call

        return wrap


def _record_code(span: trace.Span, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    code = context.code()
    status = code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.OK
    span.set_attribute("rpc.grpc.status_code", status.value[0])
    if status is not grpc.StatusCode.OK:
        span.set_status(trace.StatusCode.ERROR, status.name)
