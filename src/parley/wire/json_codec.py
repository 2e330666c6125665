"""`JsonCodec`: the one JSON codec (`parley.wire.codec_seam.Codec[JSON]`), instantiated per
(version, format) with that format's `JsonForms`: 1.0 and the 1.1 draft (ProtoJSON of
`lf.a2a.v1`), 0.3 JSON-RPC (the 0.3 JSON schema) and 0.3 REST (ProtoJSON of `a2a.v1`).

The forms are tables of encoders and decoders of parsed JSON values (`parley.wire.json_bytes`
does the bytes); where a version differs, its tables hold other functions, never a branch
here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from parley.model import (
    AgentCard,
    Artifact,
    DataPart,
    Message,
    Model,
    RawPart,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)
from parley.protocol.errors import InternalError, MethodNotFoundError, invalid_field
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.json_bytes import JSON

M = TypeVar("M", bound=Model)
Encoder = Callable[[Any], JSON]
Decoder = Callable[[Any], Any]


def each_part(encode: Encoder, decode: Decoder) -> dict[type[Any], tuple[Encoder, Decoder]]:
    """The standalone entries of the four part types, one encoder and decoder for all."""
    return {kind: (encode, decode) for kind in (TextPart, RawPart, UrlPart, DataPart)}


CONTENT_TYPES = (
    Message,
    Artifact,
    TaskStatus,
    Task,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
)
"""The content types, in the order of `wire.content_writers.ContentWriters`."""


class ContentReaders(NamedTuple):
    """One form's readers of the content types, in the order of `CONTENT_TYPES`."""

    message: Decoder
    artifact: Decoder
    status: Decoder
    task: Decoder
    status_event: Decoder
    artifact_event: Decoder


def each_content(
    writers: Sequence[Encoder], readers: ContentReaders
) -> dict[type[Any], tuple[Encoder, Decoder]]:
    """The standalone entries of the content types: a form's writers (its
    `wire.content_writers.ContentWriters`) and readers."""
    return {kind: (writers[i], readers[i]) for i, kind in enumerate(CONTENT_TYPES)}


@dataclass(frozen=True, slots=True)
class JsonForms:
    """One (version, format)'s JSON forms, as the codec needs them.

    `requests`: per operation the version has, the request type, its encoder and decoder.
    `responses`: per unary operation, the result types, the encoder and decoder (an
    operation in `requests` but not here streams: it answers with events). `standalone`:
    the encoder and decoder of every model type the format can express alone.
    `mismatch`: the field and description of the error for a decoded value of another
    type than asked for (a part of another kind). `label` names the format in errors.
    """

    version: Version
    label: str
    requests: Mapping[Operation, tuple[type[Model], Encoder, Decoder]]
    responses: Mapping[Operation, tuple[tuple[type[Any], ...], Encoder, Decoder]]
    standalone: Mapping[type[Any], tuple[Encoder, Decoder]]
    encode_event: Callable[[StreamEvent], JSON]
    decode_event: Callable[[JSON], StreamEvent]
    encode_card: Callable[[AgentCard], JSON]
    decode_card: Callable[[JSON], AgentCard]
    mismatch: Callable[[type[Model]], tuple[str, str]]


class JsonCodec:
    """Model <-> JSON values of one (version, format); stateless.

    Payloads are parsed JSON values (`params`, `result`, a body, a stream event, a card).
    Decoders raise only A2AError subclasses: InvalidParamsError naming the field for a bad
    shape, MethodNotFoundError for an operation the version lacks.
    """

    def __init__(self, forms: JsonForms) -> None:
        self.forms = forms
        self.version: Version = forms.version
        self._requests = forms.requests
        self._responses = forms.responses
        self._standalone = forms.standalone
        self.encode_event: Callable[[StreamEvent], JSON] = forms.encode_event
        self.decode_event: Callable[[JSON], StreamEvent] = forms.decode_event
        self.encode_card: Callable[[AgentCard], JSON] = forms.encode_card
        self.decode_card: Callable[[JSON], AgentCard] = forms.decode_card

    def decode_request(self, operation: Operation, payload: JSON) -> Model:
        entry = self._requests.get(operation)
        if entry is None:
            raise self._missing(operation)
        request: Model = entry[2](payload)
        return request

    def encode_request(self, operation: Operation, request: Model) -> JSON:
        """The `params` or the body (with the path and query parameters); None (send no
        `params`) where the format has none."""
        entry = self._requests.get(operation)
        if entry is None:
            raise self._missing(operation)
        kind, encode, _ = entry
        if type(request) is not kind:
            raise InternalError(
                f"{operation.value} takes a {kind.__name__}, not a {type(request).__name__}"
            )
        return encode(request)

    def encode_response(self, operation: Operation, result: Any) -> JSON:
        """A unary result; InternalError for a streaming operation (use `encode_event`)."""
        entry = self._responses.get(operation)
        if entry is None:
            if operation in self._requests:
                raise InternalError(f"{operation.value} answers with events: use encode_event")
            raise self._missing(operation)
        kinds, encode, _ = entry
        if not isinstance(result, kinds):
            raise InternalError(f"{operation.value} cannot answer a {type(result).__name__}")
        return encode(result)

    def decode_response(self, operation: Operation, payload: JSON) -> Any:
        """A unary result; for a streaming operation, one event of its stream."""
        entry = self._responses.get(operation)
        if entry is None:
            if operation in self._requests:
                return self.decode_event(payload)
            raise self._missing(operation)
        return entry[2](payload)

    def encode(self, value: Model) -> JSON:
        """The standalone wire form of a model object (requests: their payload)."""
        return self._entry(type(value))[0](value)

    def decode(self, kind: type[M], payload: JSON) -> M:
        value = self._entry(kind)[1](payload)
        if type(value) is not kind:  # a part of another kind than asked for
            raise invalid_field(*self.forms.mismatch(kind))
        decoded: M = value
        return decoded

    def _entry(self, kind: type[Any]) -> tuple[Encoder, Decoder]:
        entry = self._standalone.get(kind)
        if entry is None:
            raise InternalError(f"{self.forms.label} has no standalone form for {kind.__name__}")
        return entry

    def _missing(self, operation: Operation) -> MethodNotFoundError:
        return MethodNotFoundError(
            f"{operation.value} does not exist in A2A {self.version.value}",
            metadata={"method": operation.value},
        )
