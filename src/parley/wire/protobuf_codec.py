"""`ProtobufCodec`: the codec seam filled with protobuf messages (the gRPC binding), one
instance per version, each built over the JSON codec whose values are ProtoJSON of the
same proto.

Theory of operation: every conversion has a reference route, model ⇄ ProtoJSON value
(the version's JSON codec, with all its validation and error naming) ⇄ message
(`json_format`). What a server does on every call also has a direct route, field
assignment, several times faster (`benchmarks/grpc.py` has the figures): fillers write
results, events and requests into messages in place, and request decoders read the
ordinary shape of a request, raising `UnusualShapeError` for anything else so that the reference
route decides, and names, every error. Tests check that both routes agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from parley.model import AgentCard, Message, Model, StreamEvent, Task
from parley.protocol.errors import InternalError, InvalidRequestError, MethodNotFoundError
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from parley.wire.codec_seam import Codec
from parley.wire.protobuf import Proto, UnusualShapeError, from_json, parse, to_json
from parley.wire.protobuf_reader import reader_for

M = TypeVar("M", bound=Model)
Filler = Callable[[Proto, Any], None]
"""Writes a model object into an empty message of its type, in place."""
Decoder = Callable[[Proto], Model]


@dataclass(frozen=True, slots=True)
class Schema:
    """One version's proto as the codec needs it.

    `json`: the JSON codec of ProtoJSON of this proto (the reference route).
    `requests` / `responses`: each operation's request and unary response class (absent:
    the version lacks the operation, or it streams). `standalone`: the class of every
    model type the version can express alone. `event_fields`: the StreamResponse (and
    SendMessageResponse) member of each event type. `fillers` (required for the event
    types), `request_decoders` and `event_bytes`: the direct routes.
    """

    version: Version
    json: Codec[Any]
    requests: Mapping[Operation, type[Proto]]
    responses: Mapping[Operation, type[Proto]]
    stream_response: type[Proto]
    send_response: type[Proto]
    empty: type[Proto]
    standalone: Mapping[type[Model], type[Proto]]
    event_fields: Mapping[type[Model], str]
    fillers: Mapping[type[Model], Filler] = field(default_factory=dict)
    request_decoders: Mapping[Operation, Decoder] = field(default_factory=dict)
    event_bytes: Mapping[type[Model], Callable[[Any], bytes | None]] = field(default_factory=dict)
    """Direct serializers of a StreamResponse for some event types (None: not covered)."""


class ProtobufCodec:
    """Model <-> protobuf messages of one version (a `Codec` of messages).

    Decoders raise only A2AError subclasses: the JSON codec's InvalidParamsError naming
    the field (by its JSON name), MethodNotFoundError for an operation the version lacks,
    InvalidRequestError for a message of the wrong type.
    """

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.version: Version = schema.version
        self._card = schema.standalone[AgentCard]
        self._request_operations: dict[type[Model], Operation] = {}
        for operation in schema.requests:  # SendMessageRequest: SendMessage, not streaming
            self._request_operations.setdefault(OPERATIONS[operation].request, operation)
        self._events = {  # per event type, its StreamResponse member and filler
            kind: (name, schema.fillers[kind]) for kind, name in schema.event_fields.items()
        }
        named = {kind.DESCRIPTOR.name: kind for kind in schema.standalone.values()}
        read = reader_for({**named, "SendMessageRequest": schema.requests[Operation.SEND_MESSAGE]})
        self._read_bytes: dict[Operation, Callable[[bytes], Model | None]] = (
            {} if read is None else {o: read for o in _SENDS if o in schema.requests}
        )
        """The requests read from their bytes directly (the ordinary shape; 1.0's layout)."""

    def request_type(self, operation: Operation) -> type[Proto]:
        """The request class of an operation (MethodNotFoundError if the version lacks it)."""
        kind = self.schema.requests.get(operation)
        if kind is None:
            raise MethodNotFoundError(
                f"{operation.value} does not exist in A2A {self.version.value}",
                metadata={"method": operation.value},
            )
        return kind

    # -- requests

    def decode_request(self, operation: Operation, payload: Proto) -> Model:
        _expect(self.request_type(operation), payload)
        return self._decode_request(operation, payload)

    def request_from_bytes(self, operation: Operation, data: bytes) -> Model:
        """`decode_request` of a request's wire bytes (what a server receives): parsed as
        the operation's request message (garbage: InvalidRequestError), then decoded;
        a send of the ordinary shape read from the bytes directly, where the proto allows."""
        read = self._read_bytes.get(operation)
        if read is not None:
            request = read(data)
            if request is not None:
                return request
        return self._decode_request(operation, parse(self.request_type(operation), data))

    def _decode_request(self, operation: Operation, payload: Proto) -> Model:
        """A request message of the operation's type: directly where the schema can."""
        direct = self.schema.request_decoders.get(operation)
        if direct is not None:
            try:
                return direct(payload)
            except UnusualShapeError:
                pass
        request: Model = self.schema.json.decode_request(operation, to_json(payload))
        return request

    def encode_request(self, operation: Operation, request: Model) -> Proto:
        kind = self.request_type(operation)
        message = self._direct(request, kind)
        if message is not None:
            return message
        return from_json(self.schema.json.encode_request(operation, request), kind)

    # -- results and events

    def encode_response(self, operation: Operation, result: Any) -> Proto:
        """A unary result; streaming operations answer with `encode_event` instead."""
        if operation is Operation.SEND_MESSAGE:
            if type(result) is not Task and type(result) is not Message:
                raise InternalError(
                    f"SendMessage returns a Task or a Message, not {type(result).__name__}"
                )
            return self._wrapped(self.schema.send_response(), result)
        kind = self.schema.responses.get(operation)
        if kind is None:
            self.request_type(operation)
            raise InternalError(f"{operation.value} answers with events: use encode_event")
        message = self._direct(result, kind)
        if message is not None:
            return message
        value = self.schema.json.encode_response(operation, result)  # checks the type
        return kind() if kind is self.schema.empty else from_json(value, kind)

    def response_bytes(self, operation: Operation, result: Any) -> bytes:
        """`encode_response(operation, result)`, serialized."""
        encoded: bytes = self.encode_response(operation, result).SerializeToString()
        return encoded

    def decode_response(self, operation: Operation, payload: Proto) -> Any:
        """A unary result; for a streaming operation, one event of its stream."""
        self.request_type(operation)
        if operation is Operation.SEND_MESSAGE:
            kind = self.schema.send_response
        elif operation in self.schema.responses:
            kind = self.schema.responses[operation]
        else:
            return self.decode_event(payload)
        _expect(kind, payload)
        if kind is self.schema.empty:
            return None
        return self.schema.json.decode_response(operation, to_json(payload))

    def encode_event(self, event: StreamEvent) -> Proto:
        member = self._events.get(type(event))
        if member is None:
            raise InternalError(f"Not a stream event: {type(event).__name__}")
        response = self.schema.stream_response()
        member[1](getattr(response, member[0]), event)
        return response

    def event_bytes(self, event: StreamEvent) -> bytes:
        """`encode_event(event)`, serialized (directly where the schema can)."""
        direct = self.schema.event_bytes.get(type(event))
        if direct is not None:
            data = direct(event)
            if data is not None:
                return data
        serialized: bytes = self.encode_event(event).SerializeToString()
        return serialized

    def decode_event(self, payload: Proto) -> StreamEvent:
        _expect(self.schema.stream_response, payload)
        return self.schema.json.decode_event(to_json(payload))

    def _wrapped(self, response: Proto, value: Model) -> Proto:
        """A SendMessageResponse or StreamResponse holding `value` in its oneof."""
        name, fill = self._events[type(value)]
        fill(getattr(response, name), value)
        return response

    def _direct(self, value: Any, kind: type[Proto]) -> Proto | None:
        """The direct encoding of `value` if it has one and is a `kind`, else None."""
        fill = self.schema.fillers.get(type(value))
        if fill is None or self.schema.standalone.get(type(value)) is not kind:
            return None
        message = kind()
        fill(message, value)
        return message

    # -- cards and standalone values

    def encode_card(self, card: AgentCard) -> Proto:
        return from_json(self.schema.json.encode_card(card), self._card)

    def decode_card(self, payload: Proto) -> AgentCard:
        _expect(self._card, payload)
        return self.schema.json.decode_card(to_json(payload))

    def encode(self, value: Model) -> Proto:
        """Any model object this version can express alone, as its message; a request
        that has no message of its own, as its operation's request message."""
        if type(value) is AgentCard:
            return self.encode_card(value)
        kind = self.schema.standalone.get(type(value))
        if kind is None:
            return self.encode_request(self._operation_of(type(value)), value)
        message = self._direct(value, kind)
        if message is not None:
            return message
        return from_json(self.schema.json.encode(value), kind)

    def decode(self, kind: type[M], payload: Proto) -> M:
        value: Any
        if kind is AgentCard:
            value = self.decode_card(payload)
        elif kind in self.schema.standalone:
            _expect(self.schema.standalone[kind], payload)
            value = self.schema.json.decode(kind, to_json(payload))
        else:
            value = self.decode_request(self._operation_of(kind), payload)
        decoded: M = value  # the JSON codecs refuse a part of another kind
        return decoded

    def _operation_of(self, kind: type[Model]) -> Operation:
        found = self._request_operations.get(kind)
        if found is None:
            raise InternalError(f"A2A {self.version.value} has no message for {kind.__name__}")
        return found


_SENDS = (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE)


def _expect(kind: type[Proto], payload: Proto) -> None:
    """The payload must be a message of `kind`, from this codec's own pool."""
    descriptor = getattr(payload, "DESCRIPTOR", None)
    if descriptor is not kind.DESCRIPTOR:
        got = getattr(descriptor, "full_name", type(payload).__name__)
        raise InvalidRequestError(f"Expected a {kind.DESCRIPTOR.full_name}, got {got}")
