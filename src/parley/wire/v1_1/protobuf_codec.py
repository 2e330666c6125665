"""The A2A 1.1 draft protobuf codec (`lf.a2a.v1` of the draft proto, in a descriptor pool
of its own) of the gRPC binding: 1.0's schema (`parley.wire.v1_0.protobuf_codec`) over the draft's
messages, with the 1.1 JSON codec as the reference route, and 1.0's direct routes
extended by the five generation fields. No direct serializer of artifact updates (1.0's
writes 1.0 bytes): the draft's are encoded as messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from msgspec.structs import replace

from parley import model as m
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.protobuf import Proto
from parley.wire.protobuf_codec import ProtobufCodec, Schema
from parley.wire.v1_0 import protobuf_codec as v1_0
from parley.wire.v1_1._pb import a2a_pb2 as pb
from parley.wire.v1_1.protojson_codec import CODEC as JSON_CODEC


def _draft(kind: type[Proto]) -> type[Proto]:
    """The draft's message of the same name as a 1.0 message."""
    found: type[Proto] = getattr(pb, kind.DESCRIPTOR.name)
    return found


Numbered = TypeVar("Numbered", m.Task, m.TaskStatusUpdateEvent, m.TaskArtifactUpdateEvent)


def _numbered(fill: Callable[[Proto, Numbered], None]) -> Callable[[Proto, Numbered], None]:
    """1.0's filler of a task or an update, and its generation (0: not numbered, left out)."""

    def fill_numbered(target: Proto, value: Numbered) -> None:
        fill(target, value)
        if value.generation:
            target.generation = value.generation

    return fill_numbered


fill_task = _numbered(v1_0.fill_task)
fill_status_event = _numbered(v1_0.fill_status_event)
fill_artifact_event = _numbered(v1_0.fill_artifact_event)


def fill_configuration(target: Proto, config: m.SendMessageConfiguration) -> None:
    v1_0.fill_configuration(target, config)
    if config.if_generation_match is not None:
        target.if_generation_match = config.if_generation_match


def fill_send(target: Proto, request: m.SendMessageRequest) -> None:
    v1_0.fill_send(target, request)
    config = request.configuration
    if config is not None and config.if_generation_match is not None:
        target.configuration.if_generation_match = config.if_generation_match


def read_send(request: Proto) -> m.SendMessageRequest:
    sent = v1_0.read_send(request)
    config = request.configuration
    if sent.configuration is None or not config.HasField("if_generation_match"):
        return sent
    match = int(config.if_generation_match)
    return replace(sent, configuration=replace(sent.configuration, if_generation_match=match))


def _schema() -> Schema:
    base = v1_0.SCHEMA
    fillers: dict[type[m.Model], Any] = {
        **base.fillers,
        m.Task: fill_task,
        m.TaskStatusUpdateEvent: fill_status_event,
        m.TaskArtifactUpdateEvent: fill_artifact_event,
        m.SendMessageConfiguration: fill_configuration,
        m.SendMessageRequest: fill_send,
    }
    return Schema(
        version=Version.V1_1,
        json=JSON_CODEC,
        requests={op: _draft(kind) for op, kind in base.requests.items()},
        responses={op: _draft(kind) for op, kind in base.responses.items()},
        stream_response=pb.StreamResponse,
        send_response=pb.SendMessageResponse,
        empty=pb.Empty,
        standalone={model: _draft(kind) for model, kind in base.standalone.items()},
        event_fields=base.event_fields,
        fillers=fillers,
        request_decoders={
            Operation.SEND_MESSAGE: read_send,
            Operation.SEND_STREAMING_MESSAGE: read_send,
        },
    )


SCHEMA = _schema()
CODEC = ProtobufCodec(SCHEMA)
"""The 1.1 draft protobuf codec."""
