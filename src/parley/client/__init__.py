"""The A2A client: `Client.connect(url)` → every operation, in either protocol version, over
JSON-RPC, HTTP+JSON or gRPC (`parley.client.grpc`, the grpc extra), with streams that
resubscribe and retries for idempotent calls.

Server errors are raised as the `parley.protocol.errors` classes the server raises;
transport failures as the classes of `parley.client.errors`.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parley.client.auth import APIKeyAuth, Auth, BearerAuth
    from parley.client.card import (
        GRPC_BINDING,
        HTTP_JSON_BINDING,
        JSONRPC_BINDING,
        decode_card,
        fetch_card,
        select_interface,
    )
    from parley.client.client import Client
    from parley.client.connect import TRANSPORTS, Connecting, TransportFactory
    from parley.client.content import Content, user_message
    from parley.client.errors import (
        ClientConnectionError,
        ClientError,
        ClientProtocolError,
        ClientTimeoutError,
        NoCompatibleInterfaceError,
        StreamIdleError,
    )
    from parley.client.jsonrpc import JsonRpcTransport
    from parley.client.rest import RestTransport
    from parley.client.retry import NO_RETRY, RetryPolicy
    from parley.client.streaming import ClientStream, Reconnected, StreamItem, StreamPolicy
    from parley.client.transport import (
        DEFAULT,
        DEFAULT_TIMEOUT,
        BaseTransport,
        CallOptions,
        EventStream,
        Timeout,
        Transport,
    )

_MODULES = {
    "APIKeyAuth": "parley.client.auth",
    "Auth": "parley.client.auth",
    "BaseTransport": "parley.client.transport",
    "BearerAuth": "parley.client.auth",
    "CallOptions": "parley.client.transport",
    "Client": "parley.client.client",
    "ClientConnectionError": "parley.client.errors",
    "ClientError": "parley.client.errors",
    "ClientProtocolError": "parley.client.errors",
    "ClientStream": "parley.client.streaming",
    "ClientTimeoutError": "parley.client.errors",
    "Connecting": "parley.client.connect",
    "Content": "parley.client.content",
    "decode_card": "parley.client.card",
    "DEFAULT": "parley.client.transport",
    "DEFAULT_TIMEOUT": "parley.client.transport",
    "EventStream": "parley.client.transport",
    "fetch_card": "parley.client.card",
    "GRPC_BINDING": "parley.client.card",
    "HTTP_JSON_BINDING": "parley.client.card",
    "JSONRPC_BINDING": "parley.client.card",
    "JsonRpcTransport": "parley.client.jsonrpc",
    "NO_RETRY": "parley.client.retry",
    "NoCompatibleInterfaceError": "parley.client.errors",
    "Reconnected": "parley.client.streaming",
    "RestTransport": "parley.client.rest",
    "RetryPolicy": "parley.client.retry",
    "select_interface": "parley.client.card",
    "StreamIdleError": "parley.client.errors",
    "StreamItem": "parley.client.streaming",
    "StreamPolicy": "parley.client.streaming",
    "Timeout": "parley.client.transport",
    "Transport": "parley.client.transport",
    "TransportFactory": "parley.client.connect",
    "TRANSPORTS": "parley.client.connect",
    "user_message": "parley.client.content",
}
"""Where each exported name lives: loaded on first use, so importing one part of the
client (its errors, say) does not load httpx and every transport."""


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


__all__ = [
    "APIKeyAuth",
    "Auth",
    "BaseTransport",
    "BearerAuth",
    "CallOptions",
    "Client",
    "ClientConnectionError",
    "ClientError",
    "ClientProtocolError",
    "ClientStream",
    "ClientTimeoutError",
    "Connecting",
    "Content",
    "DEFAULT",
    "DEFAULT_TIMEOUT",
    "EventStream",
    "GRPC_BINDING",
    "HTTP_JSON_BINDING",
    "JSONRPC_BINDING",
    "JsonRpcTransport",
    "NO_RETRY",
    "NoCompatibleInterfaceError",
    "Reconnected",
    "RestTransport",
    "RetryPolicy",
    "StreamIdleError",
    "StreamItem",
    "StreamPolicy",
    "TRANSPORTS",
    "Timeout",
    "Transport",
    "TransportFactory",
    "decode_card",
    "fetch_card",
    "select_interface",
    "user_message",
]
