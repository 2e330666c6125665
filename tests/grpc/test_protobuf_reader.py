"""The direct reader of 1.0 sends (`parley.wire.protobuf_reader`) against the message
route: whatever it reads, the message route reads the same; whatever it leaves (None),
the message route decides; garbage never makes it raise."""

from __future__ import annotations

import contextvars
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parley import model as m
from parley.protocol.errors import A2AError
from parley.protocol.operations import Operation
from parley.wire.limits import Limits, use
from parley.wire.protobuf import parse
from parley.wire.protobuf_reader import read_send
from parley.wire.v0_3 import protobuf_codec as v03
from parley.wire.v1_0 import protobuf_codec as v10
from parley.wire.v1_0._pb import a2a_pb2 as pb
from parley.wire.v1_1 import protobuf_codec as v11
from tests.wire.test_grpc_codecs import MODELS

CODEC = v10.CODEC
SEND = Operation.SEND_MESSAGE


def _message_route(data: bytes) -> Any:
    """What the codec read before the direct reader: the request, or the error's type."""
    try:
        return CODEC._decode_request(SEND, parse(pb.SendMessageRequest, data))
    except A2AError as exc:
        return type(exc)


def _agrees(data: bytes) -> m.SendMessageRequest | None:
    read = read_send(data)
    if read is not None:
        assert read == _message_route(data)
    return read


def _request(**message: Any) -> pb.SendMessageRequest:
    fields: dict[str, Any] = {"message_id": "m-1", "role": 1}
    fields["parts"] = [pb.Part(text="hello")]
    fields.update(message)
    return pb.SendMessageRequest(message=pb.Message(**fields))


@settings(max_examples=200)
@given(request=MODELS[CODEC.version][m.SendMessageRequest])
def test_what_it_reads_is_what_the_message_route_reads(request: m.SendMessageRequest) -> None:
    data = CODEC.encode_request(SEND, request).SerializeToString()
    assert CODEC.request_from_bytes(SEND, data) == _message_route(data)
    _agrees(data)


@settings(max_examples=300)
@given(data=st.data())
def test_mutated_bytes_are_read_alike_or_left_alone(data: st.DataObject) -> None:
    request = _request(context_id="c", task_id="t", extensions=["e"])
    request.message.metadata.update({"skill": "echo", "n": 1.5, "b": True, "z": None})
    request.message.parts[0].media_type = "text/plain"
    request.metadata.update({"k": "v"})
    original = bytearray(request.SerializeToString())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(original) - 1))
        original[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(original)))
    _agrees(bytes(original[:cut]))
    _agrees(bytes(original))


@given(data=st.binary(max_size=80))
def test_garbage_is_left_alone_or_read_alike(data: bytes) -> None:
    _agrees(data)


def _metadata(value: Any) -> pb.SendMessageRequest:
    request = _request()
    request.message.metadata.update({"k": value})
    return request


@pytest.mark.parametrize(
    "request_",
    [
        _request(),
        _request(message_id="é" * 200, context_id="c" * 300),  # lengths of two bytes
        _request(parts=[pb.Part(text="x" * 20000, filename="f", media_type="text/plain")]),
        _request(parts=[pb.Part(url="https://example.com/a"), pb.Part(raw=b"\x00\xff")]),
        _request(parts=[pb.Part(text="")]),  # an empty oneof member: still a text part
        _request(reference_task_ids=["r1", "r2"], extensions=["a", ""]),
        _metadata(1),
        _metadata(-2.5),
        _metadata(2.0**60),  # past 2**53: stays a float
        _metadata(False),
        _metadata(None),
        _metadata(""),
        _metadata("x" * 200),
        pb.SendMessageRequest(tenant="acme", message=_request().message),
    ],
)
def test_the_ordinary_shape_is_read_directly(request_: pb.SendMessageRequest) -> None:
    assert _agrees(request_.SerializeToString()) is not None


def _twice(request: pb.SendMessageRequest, field: bytes) -> bytes:
    data: bytes = request.SerializeToString()
    return data + field


@pytest.mark.parametrize(
    "data",
    [
        b"",
        _request(message_id="").SerializeToString(),
        _request(role=0).SerializeToString(),
        _request(role=200).SerializeToString(),  # a two-byte varint, unknown
        _request(parts=[]).SerializeToString(),
        _request(parts=[pb.Part()]).SerializeToString(),
        _request(parts=[pb.Part(data=None)]).SerializeToString(),
        _metadata({"nested": 1}).SerializeToString(),
        _metadata([1]).SerializeToString(),
        pb.SendMessageRequest(
            message=_request().message, configuration=pb.SendMessageConfiguration()
        ).SerializeToString(),
        _twice(_request(), b"\x12\x00"),  # a second message: protobuf merges them
        _twice(_request(), b"\x22\x00\x22\x00"),  # two metadata Structs: merged
        _twice(_request(), b"\x28\x01"),  # an unknown field
        _twice(_request(), b"\x0a\x02\xff\xfe"),  # a tenant that is not UTF-8
        _request().SerializeToString()[:-1],  # ends early
        b"\x12\x0d\x0a\x01m\x20\x01\x2a\x06\x0a\x01a\x1a\x01b",  # text, then url: the last wins
        _request(metadata={"k" * 200: "v"}).SerializeToString(),  # a key of two length bytes
        b"\x12\x03\x0a\x01" + struct.pack("<B", 0x80),
    ],
)
def test_anything_else_is_left_to_the_message_route(data: bytes) -> None:
    assert _agrees(data) is None


def test_limits_are_the_message_routes() -> None:
    many = _request(parts=[pb.Part(text="p")] * 3).SerializeToString()
    with_metadata = _metadata("v").SerializeToString()

    def under(limits: Limits) -> tuple[Any, Any]:
        use(limits)
        return read_send(many), read_send(with_metadata)

    expected = (None, read_send(with_metadata))
    assert contextvars.copy_context().run(under, Limits(max_parts=2)) == expected
    assert contextvars.copy_context().run(under, Limits(max_value_depth=0))[1] is None
    assert read_send(many) is not None


def test_only_the_1_0_layout_is_read_directly() -> None:
    assert set(CODEC._read_bytes) == {Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE}
    assert v03.CODEC._read_bytes == {}
    assert v11.CODEC._read_bytes == {}  # the draft's configuration has more fields
