"""The codec seam: one codec per (protocol version, format) turns model objects into
wire payloads and back. Bindings pick a codec after negotiation and never branch on
version. JSON codecs use parsed JSON values as payloads; the protobuf codecs (gRPC)
use protobuf messages. Generated code never leaves its codec.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from parley.model import AgentCard, Model, StreamEvent
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation

P = TypeVar("P")
M = TypeVar("M", bound=Model)


class Codec(Protocol[P]):
    """Model <-> wire payload for one protocol version and one format.

    Requests: servers `decode_request`, clients `encode_request`.
    Responses: servers `encode_response`, clients `decode_response`; the result of
    SendMessage is a Task or Message, of DeleteTaskPushNotificationConfig None.
    Stream events and push payloads: `encode_event` / `decode_event`.
    Every decoder raises only A2AError subclasses (InvalidParamsError for bad shapes).
    """

    version: Version

    def decode_request(self, operation: Operation, payload: P) -> Model: ...

    def encode_request(self, operation: Operation, request: Model) -> P: ...

    def encode_response(self, operation: Operation, result: Any) -> P: ...

    def decode_response(self, operation: Operation, payload: P) -> Any: ...

    def encode_event(self, event: StreamEvent) -> P: ...

    def decode_event(self, payload: P) -> StreamEvent: ...

    def encode_card(self, card: AgentCard) -> P: ...

    def decode_card(self, payload: P) -> AgentCard: ...

    def encode(self, value: Model) -> P:
        """Any model object this version can express, in its standalone wire form."""
        ...

    def decode(self, kind: type[M], payload: P) -> M:
        """The inverse of `encode` for one model type."""
        ...
