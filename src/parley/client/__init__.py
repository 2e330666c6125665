"""The A2A client: `Client.connect(url)` → every operation, in either protocol version, over
JSON-RPC, HTTP+JSON or gRPC (`parley.client.grpc`, the grpc extra), with streams that
resubscribe and retries for idempotent calls.

Server errors are raised as the `parley.protocol.errors` classes the server raises;
transport failures as the classes of `parley.client.errors`.
"""

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
